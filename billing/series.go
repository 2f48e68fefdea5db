package billing

// SlotSeconds is the width of one billing slot: every reader converts its input
// onto a regular 300 s grid, a slot being named by its start, floor(t/300)*300.
const SlotSeconds = 300

// Slot is the traffic of one 300 s slot, in bytes per direction.
// In and Out are float64 so that readers of rate formats (rrdtool, Prometheus)
// keep their fractions; integers are exact up to 2^53 bytes per slot.
type Slot struct {
	Start int64   // unix seconds, a multiple of SlotSeconds
	In    float64 // bytes received in the slot
	Out   float64 // bytes sent in the slot
}

// Series is one interface's traffic on the 5-minute grid.
type Series struct {
	Name   string // interface name (CSV interface column, vnstat interface, Prometheus labels) or file base name
	Source string // file (or URL) it was read from, for messages
	Format string // csv, mrtg, vnstat, rrdtool-xml, rrdtool-json, prometheus
	// Step is the spacing of the source samples in seconds (300, finer, or coarser).
	// Coarser than 300 s is refused for percentile billing unless allowed.
	Step int64
	// Slots are ascending by Start, at most one per slot; missing slots are gaps.
	Slots []Slot
	// Filled lists, ascending, the starts of slots that the logging tool
	// filled in rather than measured (MRTG's rateup repeats the last rate
	// over a poller outage): present, but not known to be traffic.
	Filled []int64
	// Warnings are things the reader noticed and the report should show
	// (counter wraps, resets, rates above a stated port speed …), each prefixed with file:line.
	Warnings []string
}
