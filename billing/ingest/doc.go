// Package ingest turns traffic logs into billing series: it detects the
// format of a log by its content (CSV, MRTG, vnstat, rrdtool xport,
// Prometheus query_range), reads it with the format's reader, and puts the
// samples on billing's 5-minute grid (grid.go), one billing.Series per
// interface. Pricing (package billing) takes the series from here and never
// reads a file.
//
// Files: read.go (options, errors, entry points), detect.go (format by
// content), grid.go (the builder every reader feeds: slots, spans, counters,
// rate checks), csv.go and values.go (the parallel CSV reader and its
// allocation-free field parsers), mrtg.go, vnstat.go, rrdtool.go, json.go
// (the line-tracking JSON walker), prometheus.go (query_range matrices,
// saved or fetched live, to series), mmap_*.go (large files mapped rather
// than read).
//
// Every error for bad input is a *ReadError naming file:line and field.
// docs/readers.md describes each format's conventions.
package ingest
