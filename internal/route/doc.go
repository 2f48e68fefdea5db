// Package route turns probe results into statistics a network engineer can
// put in front of a provider: RTT statistics and percentiles, jitter, hop
// analysis, line classification and stretch. It is pure: no sockets, no
// clock; every function takes its inputs explicitly.
//
// Package probe measures and owns the raw results (probe.ProbeResult,
// probe.MPLS, a trace run as measured: probe.TraceRun); route depends on
// probe, never the reverse. BuildTrace makes the linecheck.trace/v1
// document (Trace) of a probe.TraceRun, BuildHops the hops of its results.
//
// Definitions (docs/definitions.md has them with their public sources):
//
//   - RTT percentiles are nearest-rank: the value of rank ceil(p/100·n) in the
//     ascending sort. Stdev is the sample standard deviation (n−1).
//   - Jitter, each over the RTTs of received replies in send order; the first
//     sample never counts as a difference:
//     rfc3550:  J += (|D|−J)/16 over consecutive RTT differences D, in ms,
//     no integer scaling (mtr shows ≈16× this);
//     mean_abs: mean |RTT_n − RTT_n−1| (mtr's Javg, without its first-sample 0);
//     pdv_p95:  nearest-rank p95 of RTT − min RTT.
package route
