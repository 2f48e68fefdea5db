// Package engine is linecheck's live runtime: the one package that runs
// probes continuously. Surfaces (the TUI, serve, cmd's watch commands)
// subscribe to its loops' events or hand it their state; only engine and
// the one-off commands (ping, trace, compare's one-shot run, ...) call
// package probe.
//
// It owns:
//   - the Prober seam over package probe (Prober, and Sender, the one that
//     really sends), with its optional MultipathProber and PathMTUProber;
//   - the Scheduler: when a round may start (its targets due, the shared
//     packets-per-second Budget ready) and Quiet, which pauses every round
//     while a throughput test fills the line;
//   - resolution (pacing.Resolver, bounded and cached) and the exponential
//     back-off of a failing target.
//
// The loops it owns:
//   - SweepLoop (and PingLoop, one target): every target of every
//     candidate in one mixed-protocol sweep a round (the TUI);
//   - TraceLoop: a candidate's forward route, mtr style (the TUI);
//   - MultipathTraceLoop: TraceLoop for a multipath candidate (the TUI);
//   - ThroughputLoop: the candidates' bandwidth_test rounds (the TUI);
//   - MonitorLoops: the above, made for a candidates file (the TUI);
//   - RunCycles: serve's cycles (resolve, sweep, trace every n-th cycle,
//     charge the budget) over the exporter's per-target state (CycleState);
//   - BWLoop: serve's throughput rounds (--bw-every), holding the Quiet;
//   - GPULoop: serve's GPU sampler (--gpu-every);
//   - Watch with PingCycle, TraceCycle and BWCycle: ping, trace and bw
//     --watch (cmd keeps the journal and the progress line);
//   - PingRounds: ping --loop (fping -l), with -Q's interim rounds.
//
// It also holds what every live run shares with compare's one-shot run
// (compare.Probe, which sends through the engine.Prober cmd gives it,
// engine.Sender): the safety check of a file's targets (CheckLiveTargets),
// the trace and multipath configurations of a target (TraceConfig,
// MultipathTraceConfig) and the one throughput test (RunBandwidthTest,
// MeasureThroughput). engine imports candidates and verdict, never compare;
// compare imports engine.
//
// Still outside it: gpu --watch's sampling loop (cmd/linecheck/gpu_watch.go:
// it probes no line).
//
// Definitions (pacing, back-off, what a cut round counts) are in
// docs/scaleout.md (Pacing) and the loops' doc comments.
package engine
