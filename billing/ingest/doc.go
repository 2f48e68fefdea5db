// Package ingest turns traffic logs into billing series: it detects the
// format of a log by its content (CSV, MRTG, vnstat, rrdtool xport,
// Prometheus query_range), reads it with the format's reader, and puts the
// samples on billing's 5-minute grid (grid.go), one billing.Series per
// interface. Pricing (package billing) takes the series from here and never
// reads a file.
//
// Files: read.go (options, errors, entry points), files.go (many logs read
// in parallel, in order), detect.go (format by content), grid.go (the
// builder every reader feeds: slots, spans, counters, rate checks), csv.go
// and values.go (the parallel CSV reader, counter detection and the
// allocation-free field parsers), mrtg.go (rateup logs, poller outages),
// vnstat.go, rrdtool.go, json.go (the line-tracking JSON walker of the
// vnstat and rrdtool readers), promjson.go (the streaming query_range
// decoder) and prometheus.go (matrices to series: one converter for a saved
// answer and for internal/promclient's live fetch), mmap_*.go (large files
// mapped rather than read; a file truncated under the mapping is an error,
// not SIGBUS).
//
// Each format is a trafficReader (read.go): its name, its rank in
// detection, how its first bytes are told, its reader. It is defined in the
// format's own file beside its parser and listed once in read.go's readers,
// which give Formats (--input's help and the unknown-format message) and
// detect's order. A new format is its file, its line there, its test and
// testdata.
//
// Every error for bad input is a *ReadError naming file:line and field.
// docs/readers.md describes each format's conventions.
package ingest
