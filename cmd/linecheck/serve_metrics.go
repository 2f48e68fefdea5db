package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/linecheck/linecheck/internal/exporter"
)

// serveProcessMetrics adds to serve's /metrics what every exporter shows of
// itself: linecheck_build_info{version,revision,goversion} (always 1), and
// the Go runtime's and the process's metrics (go_*, process_*) from
// client_golang's own collectors, in a registry of serve's (never the
// library's global one), so that they are the figures every Go exporter's
// dashboards already read.
func serveProcessMetrics(exp *exporter.Exporter) {
	b := readBuild()
	rev := b.revision
	if rev == "" {
		rev = "unknown"
	} else if b.modified {
		rev += "-modified"
	}
	exp.Registry().NewGaugeVec("linecheck_build_info",
		"A metric with a constant '1' value labeled by the version, the commit (revision, 'unknown' when the build has none) and the Go version linecheck was built with.",
		"version", "revision", "goversion").WithLabelValues(b.version, rev, b.goVersion).Set(1)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp.Registry().AddGatherer(reg)
}
