// Package compare runs a candidates file and states the outcome as the
// linecheck.compare/v1 document: for each candidate of the file
// (internal/candidates) it measures, hands the measurement to the verdict
// (internal/verdict: windows, Evaluate, the SLA checks, cost, ranking) and
// gathers the evaluations into a Result. It never renders: `linecheck
// compare` (through internal/report), the TUI and serve are frontends over
// its results.
//
// What it holds:
//   - the run: OpenSession (the one way every surface opens a file: the
//     refusals, hop names, pricing, each candidate's replay and
//     evaluation), Run (the report's run over a session, with the
//     delivery, usage and ranking) and SnapshotResult (serve's snapshot as
//     the same document);
//   - measurement: Replay (recordings), Probe (a one-shot live run), the
//     live throughput test (RunBandwidthTest, MeasureThroughput), and for
//     now the continuous loops (MonitorLoops, PingLoop, TraceLoop,
//     ThroughputLoop, Scheduler; moving to internal/engine), all probing
//     through an injected Prober (ProbeSender sends with package probe);
//   - the document: Result, HideHops, Rank (verdict.Rank into the Result).
//
// moved.go keeps transitional aliases for the names that moved to
// internal/candidates and internal/verdict (issue 34) while code still
// refers to them here.
//
// A figure without data is null in the document.
package compare
