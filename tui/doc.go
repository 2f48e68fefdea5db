// Package tui is linecheck's terminal user interface (Bubble Tea v2): route
// quality and monthly cost of every candidate side by side, updating live as
// probe records and trace snapshots arrive.
//
// The package is a frontend over plain view-model structs (Candidate, Route,
// Cost, Traffic) that it owns, so it does not depend on how compare, billing or
// probe compute them; tui/adapt.go converts their types. Updates arrive as
// messages (ProbeMsg, TraceMsg, CostMsg) produced by a Source inside tea.Cmds:
// all I/O (reading recordings, sleeping for a replay, probing, billing) runs in
// commands, and state changes only in Model.Update. Panels are
// render…(data, width) string functions, all styles live in styles.go, and
// every width and time range is explicit, so a frame renders the same in a
// golden test as on screen.
//
// Live statistics use bounded ring buffers: a candidate keeps the last
// HistorySize RTT samples (sparkline, percentiles, RTT chart) and running
// counters (sent, received, lost, RFC 3550 jitter, minimum RTT), so memory does
// not grow over a long run.
//
// Definitions (loss, percentiles, RFC 3550 jitter, stretch, icmp-rate-limited)
// are those of docs/definitions.md; percentiles are nearest-rank (route.NearestRank).
package tui
