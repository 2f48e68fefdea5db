package engine

import (
	"github.com/linecheck/linecheck/probe"
	"github.com/linecheck/linecheck/probe/bw"
)

// The probe types the surfaces read, named here so that they subscribe to
// the engine and import no probe package (the TUI and serve's exporter;
// imports_test.go holds them to it).

// Record is one probe's outcome as the loops emit it (probe.Record).
type Record = probe.Record

// Statuses of a Record.
const (
	StatusOK   = probe.StatusOK
	StatusLost = probe.StatusLost
	StatusLate = probe.StatusLate
	StatusDup  = probe.StatusDup
)

// StreamSchema is the schema of a recorded probe stream's records.
const StreamSchema = probe.StreamSchema

// Protocol is a probe's protocol (probe.Protocol).
type Protocol = probe.Protocol

// Protocols a target is probed with.
const (
	ICMP = probe.ICMP
	TCP  = probe.TCP
	UDP  = probe.UDP
)

// Clock is the loops' time: the real one in a surface, a fake in tests.
type Clock = probe.Clock

// BWResult is one throughput test's outcome (bw.Result).
type BWResult = bw.Result

// Directions of a throughput test.
const (
	Download = bw.Download
	Upload   = bw.Upload
)
