package probe

// Protocol is how a target is probed. Its string is the name used on the
// command line, in candidates files and in every JSON document.
type Protocol string

// Protocols.
const (
	ICMP Protocol = "icmp" // ICMP echo (ping), ICMP probes (trace)
	TCP  Protocol = "tcp"  // TCP connect time (ping), TCP SYN probes (trace)
	UDP  Protocol = "udp"  // UDP probes (trace only)
)

// Status is one probe's outcome. Its string is the "status" of a
// linecheck.probe/v1 record.
type Status string

// Probe statuses.
const (
	StatusOK   Status = "ok"   // reply within the timeout
	StatusLost Status = "lost" // no reply within the timeout
	StatusLate Status = "late" // reply after the timeout: counted apart, not as received
	StatusDup  Status = "dup"  // a duplicate reply to a probe already answered
)

// Received tells whether the status counts as a received reply (only ok does).
func (s Status) Received() bool { return s == StatusOK }

// HasRTT tells whether a record of this status carries a round-trip time.
func (s Status) HasRTT() bool { return s == StatusOK || s == StatusLate || s == StatusDup }

// Valid tells whether s is one of the four statuses.
func (s Status) Valid() bool { return s.HasRTT() || s == StatusLost }
