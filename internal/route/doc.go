// Package route turns probe results into what a network engineer can put in
// front of a provider: hops and responders (with their RTT statistics from
// package stats), hop analysis, line classification and stretch. Its
// functions take their inputs explicitly: no sockets, no clock.
//
// Package probe measures and owns the raw results (probe.ProbeResult,
// probe.MPLS, a trace run as measured: probe.TraceRun); route depends on
// probe, never the reverse. BuildTrace makes the linecheck.trace/v1
// document (Trace) of a probe.TraceRun, BuildHops the hops of its results.
// The statistics (nearest-rank percentiles, jitter) are package stats'.
package route
