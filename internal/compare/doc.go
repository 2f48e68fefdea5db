// Package compare is linecheck's evaluation core: it decides, for each
// candidate server of a candidates file, how good its line is, whether it
// meets the SLA, what it costs a month, and how the candidates rank. It
// never renders: `linecheck compare` (through internal/report), the TUI and
// serve are frontends over its results.
//
// One definition of each rule lives here:
//   - the candidates file: Load / LoadWith (strict: every key and value
//     checked, errors with file:line; LoadOptions make parts optional for
//     the TUI and serve), ErrRecordedOnly (documentation addresses are refused by probe.CheckTarget);
//   - measurement: Replay (recordings), Run / Probe (a one-shot live run)
//     and MonitorLoops / PingLoop / TraceLoop (continuous, mtr style), all
//     probing through an injected Prober (ProbeSender sends with package
//     probe); the live loops keep their pace with package pacing, as serve
//     does (per-target interval across rounds, one shared rate cap,
//     backoff of failing targets, names resolved at a bounded rate with a
//     cache), on an injected clock; the throughput tests (bandwidth_test)
//     are RunBandwidthTest (MeasureThroughput summarises it), run once by
//     Run and round after round by ThroughputLoop, which holds a Quiet so
//     the probe loops pause while a test fills the line (serve's
//     --bw-every runs the same test and holds a Quiet over its cycles);
//   - judgement: RouteQuality.AddTargets (the worst over the targets for
//     what the SLA bounds, the best minimum for the floor), SetFloor
//     (stretch), Evaluate, CheckSLA (a check without data fails);
//   - money: NewPricing, Pricing.Monthly and Pricing.Rebill (billing's
//     bills, converted with one billing.FX — the file's fx:, else the offers
//     file's, Pricing.FX — and rounded once; amounts are billing.Money, exact
//     decimals, rendered only by the reports), with billing's judgement of
//     whether an offer's port can carry the traffic;
//   - ranking: RankLess over RankKey, Rank, RankingRule.
//
// Result, Evaluation and the other result types are the
// linecheck.compare/v1 document; a figure without data is null in it.
package compare
