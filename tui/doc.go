// Package tui is linecheck's terminal user interface (Bubble Tea v2): route
// quality and monthly cost of every candidate side by side, updating live as
// probe records and trace snapshots arrive.
//
// The package only renders and routes keys. Judging is the verdict's
// (internal/verdict), the code compare and serve use: the candidates file is
// read by the strict loader of internal/candidates, the live probes and
// throughput tests come from the core's loops (engine.MonitorLoops), a
// row's route quality and SLA verdict are verdict.EvaluateLive's evaluation
// of its windows, recording, floor and traces (the TUI assembles neither
// itself), the rows are in the verdict's ranking order (verdict.RankLess),
// and costs are re-billed and converted by verdict.Pricing. tui/adapt.go maps those results to the view-model structs
// the screens draw (Candidate, Route, Cost, Traffic).
//
// Updates arrive as messages (ProbeMsg, TraceMsg, ThroughputStartMsg,
// ThroughputMsg, CostMsg) produced by a
// Source inside tea.Cmds: all I/O (reading recordings, sleeping for a replay,
// probing, billing) runs in commands, and state changes only in
// Model.Update. A trace snapshot is a document its producer never touches
// again. Panels are render…(data, width) string functions, all styles live in
// styles.go, and every width and time range is explicit, so a frame renders
// the same in a golden test as on screen.
//
// Live statistics use bounded ring buffers: a target keeps the last
// HistorySize RTT samples (sparkline, percentiles, jitter, RTT chart) and
// running counters (sent, received, lost, late, duplicates), so memory does
// not grow over a long run. The figures of the window (loss, percentiles,
// jitter) come from verdict.Window.Result, the one window statistic compare
// and serve use too; JIT is the window's jitter the SLA checks (mean |D|),
// the route screen shows RFC 3550's running value beside it as "now".
//
// Definitions (loss, percentiles, jitter, stretch, icmp-rate-limited)
// are those of docs/definitions.md; percentiles are nearest-rank (percentile.NearestRank).
package tui
