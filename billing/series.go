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
	// Parts says, for a source that mixes resolutions (a vnstat export:
	// 5-minute entries for the last 5MinuteHours, hourly or daily ones
	// before; an MRTG log: 5-minute rows for ~50 h, then 30-minute, 2-hour
	// and daily ones), which stretch of the timeline was read at which step:
	// ascending, not overlapping. Empty means the whole series is at Step.
	// The engine refuses percentile billing only where a coarse part meets
	// the period, and the report says which rows priced the volume.
	Parts []Part
	// FineHint, when set, says how to get 5-minute data where this source
	// only has coarser rows (vnstat: its 5MinuteHours setting); the refusal
	// of percentile billing on coarse data quotes it.
	FineHint string
	// Warnings are things the reader noticed and the report should show
	// (counter wraps, resets, rates above a stated port speed …), each prefixed with file:line.
	Warnings []string
}

// Part is a stretch [Start, End) of a series read from Rows source rows of
// Step seconds each; a row cut short (the finer rows of the next part
// cover the rest of it) is a part of its own, with Rows 1.
type Part struct {
	Start, End int64
	Step       int64
	Rows       int
}

// rowsIn is the number of the part's rows that overlap [a, b).
func (p Part) rowsIn(a, b int64) int {
	lo, hi := max(p.Start, a), min(p.End, b)
	if lo >= hi {
		return 0
	}
	if p.Rows <= 1 || p.Step <= 0 {
		return min(p.Rows, 1)
	}
	first := (lo - p.Start) / p.Step
	last := (hi - p.Start + p.Step - 1) / p.Step
	return int(min(last, int64(p.Rows)) - first)
}
