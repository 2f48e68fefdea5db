// Package bw is a throughput test in the iperf3 protocol: Run is a client
// that tests against a stock `iperf3 -s` (3.x), and Server answers stock
// `iperf3 -c` clients. Like package probe it opens sockets and depends on no
// other package of ours; results are plain structs (Result, schema
// linecheck.bw/v1) that callers journal, judge and render.
//
// # Protocol
//
// A test has one control connection (TCP, port 5201 by default) and one or
// more data streams. The client sends a 37-byte cookie (36 characters and a
// NUL); from then on the control connection carries one-byte states and
// JSON messages framed by a 4-byte big-endian length:
//
//	server: PARAM_EXCHANGE (9)      client: parameters JSON
//	server: CREATE_STREAMS (10)     client: connects the data streams
//	                                (TCP: sends the cookie on each;
//	                                UDP: a 4-byte greeting the server answers)
//	server: TEST_START (1), TEST_RUNNING (2)   data flows
//	client: TEST_END (4)            after omit + time
//	server: EXCHANGE_RESULTS (13)   client results JSON, then server's
//	server: DISPLAY_RESULTS (14)    client: IPERF_DONE (16)
//
// A busy server answers the cookie with ACCESS_DENIED (-1); SERVER_ERROR
// (-2) is followed by iperf3's error number and errno, 4 bytes each.
// Streams are numbered 1, 3, 4, 5 …; in a bidirectional test the client
// connects its sending streams first.
//
// # Definitions
//
//   - Mean throughput = bytes that reached the receiver / the receiver's
//     measured time, both after --omit: iperf3's receiver sum. For an upload
//     the receiver is the server and its figures come from the results
//     exchange; for a download they are this side's own.
//   - Intervals: every --interval, the bytes that reached the receiver in
//     that interval as this side can tell (a TCP sender counts what TCP_INFO
//     says the peer acknowledged, so data still in the socket buffer does not
//     count), in bit/s. p5/p50/p95 are over the intervals by the
//     caller's percentile rule (Config.Percentile; linecheck passes its one
//     nearest-rank, percentile.NearestRank), min/max their extremes; an interval
//     shorter than half --interval (the last one, cut by the end) is left
//     out of them.
//   - Retransmits: the sender's TCP_INFO total_retrans over the measured
//     time (ours when we send, the server's from the results exchange when
//     it does). Interval RTT: the smoothed RTT of TCP_INFO at the interval's
//     end, mean over streams (a receiver's is the kernel's receive-side
//     estimate).
//   - UDP, as iperf3 computes it: each datagram carries the send time and a
//     sequence number. A number above the highest seen + 1 counts the gap as
//     lost; a number at or below the highest is out of order and takes one
//     back from lost. Loss = lost / datagrams the sender sent. Jitter is
//     RFC 1889's J += (|D| − J)/16 over consecutive one-way transit times
//     (clock offsets cancel). iperf3 servers do not send their out-of-order
//     count, so an upload's is null.
//   - --bitrate is per stream (iperf3's -b): the sender waits whenever it is
//     ahead of rate·elapsed.
package bw
