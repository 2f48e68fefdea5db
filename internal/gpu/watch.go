package gpu

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// WatchQuery is the --query-gpu list `gpu --watch` samples. Drivers before
// 530 name the reasons clocks_throttle_reasons.*: an unknown field fails
// the whole query, so the watch asks WatchQueryOld after such a refusal.
const (
	WatchQuery    = "timestamp,index,uuid,temperature.gpu,power.draw,power.limit,enforced.power.limit,clocks.sm,clocks.mem,utilization.gpu,utilization.memory,clocks_event_reasons.active,ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.volatile.total"
	WatchQueryOld = "timestamp,index,uuid,temperature.gpu,power.draw,power.limit,enforced.power.limit,clocks.sm,clocks.mem,utilization.gpu,utilization.memory,clocks_throttle_reasons.active,ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.volatile.total"
)

// Clock-event (throttle) reason bits, as NVML defines them and nvidia-smi
// prints them in clocks_event_reasons.active.
const (
	ReasonIdle              uint64 = 0x1
	ReasonAppClocks         uint64 = 0x2
	ReasonSWPowerCap        uint64 = 0x4
	ReasonHWSlowdown        uint64 = 0x8
	ReasonSyncBoost         uint64 = 0x10
	ReasonSWThermalSlowdown uint64 = 0x20
	ReasonHWThermalSlowdown uint64 = 0x40
	ReasonHWPowerBrake      uint64 = 0x80
	ReasonDisplayClocks     uint64 = 0x100
)

// Throttling are the reasons that hold the clocks below what the load asks
// for: the cap, the cooling, the power supply (package doc).
var Throttling = []struct {
	Bit  uint64
	Name string // the field name after clocks_event_reasons.
}{
	{ReasonSWPowerCap, "sw_power_cap"},
	{ReasonHWSlowdown, "hw_slowdown"},
	{ReasonSWThermalSlowdown, "sw_thermal_slowdown"},
	{ReasonHWThermalSlowdown, "hw_thermal_slowdown"},
	{ReasonHWPowerBrake, "hw_power_brake_slowdown"},
}

// ThrottleMask is the union of the Throttling bits.
const ThrottleMask = ReasonSWPowerCap | ReasonHWSlowdown | ReasonSWThermalSlowdown | ReasonHWThermalSlowdown | ReasonHWPowerBrake

// Sample is one card at one instant. Pointers are nil where the driver
// gave no figure ([N/A], [Not Supported]).
type Sample struct {
	Time        time.Time `json:"time"`
	Index       int       `json:"index"`
	UUID        string    `json:"uuid,omitempty"`
	TempC       *float64  `json:"temp_c"`
	PowerW      *float64  `json:"power_w"`
	PowerLimitW *float64  `json:"power_limit_w"`
	SMClockMHz  *float64  `json:"sm_clock_mhz"`
	MemClockMHz *float64  `json:"mem_clock_mhz"`
	UtilGPU     *float64  `json:"util_gpu_pct"`
	UtilMem     *float64  `json:"util_mem_pct"`
	// Reasons is the clocks_event_reasons.active bit mask.
	Reasons        *uint64  `json:"reasons"`
	ECCUncorrected *float64 `json:"ecc_uncorrected_volatile"`
	ECCCorrected   *float64 `json:"ecc_corrected_volatile"`
}

// Xid is one Xid error the driver logged in the kernel log.
type Xid struct {
	Time  time.Time `json:"time"`
	BusID string    `json:"bus_id"`
	Code  int       `json:"code"`
	Text  string    `json:"text"`
}

// ParseSamples reads query CSV output with a timestamp column (one run of
// WatchQuery, or a log of `nvidia-smi --query-gpu=… --format=csv -l N`),
// nvidia-smi's local-time timestamps read in loc. The reasons come from the
// .active mask or, when only the per-reason columns were asked for, from
// those ("Active" / "Not Active").
func ParseSamples(b []byte, name string, loc *time.Location) ([]Sample, error) {
	t, err := readQueryCSV(b, name)
	if err != nil {
		return nil, err
	}
	if _, ok := t.index["timestamp"]; !ok {
		return nil, perr(name, 1, "no timestamp column: a watch needs --query-gpu=timestamp,index,… (the query gpu --watch runs is %s)", WatchQuery)
	}
	if _, ok := t.index["index"]; !ok {
		return nil, perr(name, 1, "no index column: nothing says which card a row is")
	}
	var out []Sample
	for k, row := range t.rows {
		ln := t.lines[k]
		var s Sample
		ts, _ := t.get(row, "timestamp")
		tm, err := parseQueryTime(ts, loc)
		if err != nil {
			return nil, perr(name, ln, "%v", err)
		}
		s.Time = tm
		cells := csvCells{t: t, row: row}
		num := cells.num
		var idx *float64
		num(&idx, "index")
		if idx == nil {
			return nil, perr(name, ln, "no card index")
		}
		s.Index = int(*idx)
		s.UUID, _ = t.get(row, "uuid")
		num(&s.TempC, "temperature.gpu")
		num(&s.PowerW, "power.draw")
		cells.powerLimit(&s.PowerLimitW)
		num(&s.SMClockMHz, "clocks.sm")
		num(&s.MemClockMHz, "clocks.mem")
		num(&s.UtilGPU, "utilization.gpu")
		num(&s.UtilMem, "utilization.memory")
		num(&s.ECCUncorrected, "ecc.errors.uncorrected.volatile.total")
		num(&s.ECCCorrected, "ecc.errors.corrected.volatile.total")
		if v, ok := t.get(row, "clocks_event_reasons.active"); ok && !absent(v) {
			m, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(v), "0x"), 16, 64)
			if err != nil {
				cells.errs = append(cells.errs, fmt.Sprintf("column clocks_event_reasons.active: %q is not a hex bit mask", v))
			} else {
				s.Reasons = &m
			}
		} else {
			var m uint64
			seen := false
			for _, r := range append(Throttling, struct {
				Bit  uint64
				Name string
			}{ReasonIdle, "gpu_idle"}) {
				v, ok := t.get(row, "clocks_event_reasons."+r.Name)
				if !ok || absent(v) {
					continue
				}
				seen = true
				switch strings.ToLower(v) {
				case "active":
					m |= r.Bit
				case "not active":
				default:
					cells.errs = append(cells.errs, fmt.Sprintf("column clocks_event_reasons.%s: %q is neither Active nor Not Active", r.Name, v))
				}
			}
			if seen {
				s.Reasons = &m
			}
		}
		if len(cells.errs) > 0 {
			return nil, perr(name, ln, "%s", strings.Join(cells.errs, "; "))
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, perr(name, 1, "a header and no sample: the output is cut short")
	}
	return out, nil
}

// parseQueryTime reads the timestamp column ("2024/11/14 07:00:14.123").
func parseQueryTime(s string, loc *time.Location) (time.Time, error) {
	for _, layout := range []string{"2006/01/02 15:04:05.000", "2006/01/02 15:04:05", time.RFC3339Nano} {
		if t, err := time.ParseInLocation(layout, strings.TrimSpace(s), loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %q is not nvidia-smi's YYYY/MM/DD HH:MM:SS.mmm", s)
}

// CardWatch is the summary of one card's samples.
type CardWatch struct {
	Index   int    `json:"index"`
	UUID    string `json:"uuid,omitempty"`
	Samples int    `json:"samples"`
	// First and Last bound the samples in time.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
	// MaxTempC and MeanTempC over the samples with a temperature.
	MaxTempC  *float64 `json:"max_temp_c"`
	MeanTempC *float64 `json:"mean_temp_c"`
	// ThrottleShare is the share of samples with reasons reported that hold a
	// throttling reason; ByReason per reason (a sample may hold several).
	ReasonSamples int                `json:"reason_samples"`
	ThrottleShare *float64           `json:"throttle_share"`
	ByReason      map[string]float64 `json:"throttle_share_by_reason"`
	// Power against the cap: the highest and mean draw, the cap (the
	// highest limit seen), and the share of samples drawing 98 % of it or more.
	MaxPowerW     *float64 `json:"max_power_w"`
	MeanPowerW    *float64 `json:"mean_power_w"`
	PowerCapW     *float64 `json:"power_cap_w"`
	AtCapShare    *float64 `json:"at_cap_share"`
	MaxSMClockMHz *float64 `json:"max_sm_clock_mhz"`
	MinSMClockMHz *float64 `json:"min_sm_clock_mhz"`
	MeanUtilGPU   *float64 `json:"mean_util_gpu_pct"`
	// ECCNew is the rise of the volatile uncorrected ECC count over the
	// watch (counts reset at driver load, so the rise is what happened).
	ECCUncorrectedNew *float64 `json:"ecc_uncorrected_new"`
	ECCCorrectedNew   *float64 `json:"ecc_corrected_new"`
}

// AtCapFraction is how close to the cap a draw counts as at the cap:
// the driver holds the draw a little under its limit.
const AtCapFraction = 0.98

// Summarize groups samples by card (index order) and summarises each.
func Summarize(samples []Sample) []CardWatch {
	by := map[int][]Sample{}
	for _, s := range samples {
		by[s.Index] = append(by[s.Index], s)
	}
	var idx []int
	for i := range by {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var out []CardWatch
	for _, i := range idx {
		out = append(out, summarizeCard(i, by[i]))
	}
	return out
}

// summarizeCard summarises the samples of card i, in time order.
func summarizeCard(i int, ss []Sample) CardWatch {
	sort.SliceStable(ss, func(a, b int) bool { return ss[a].Time.Before(ss[b].Time) })
	w := CardWatch{Index: i, Samples: len(ss), First: ss[0].Time, Last: ss[len(ss)-1].Time, ByReason: map[string]float64{}}
	t := cardTally{perReason: map[string]int{}}
	for _, s := range ss {
		t.add(&w, s)
	}
	if t.tN > 0 {
		w.MeanTempC = fptr(round(t.tSum/t.tN, 2))
	}
	if t.pN > 0 {
		w.MeanPowerW = fptr(round(t.pSum/t.pN, 2))
	}
	if t.uN > 0 {
		w.MeanUtilGPU = fptr(round(t.uSum/t.uN, 2))
	}
	if w.ReasonSamples > 0 {
		w.ThrottleShare = fptr(float64(t.throttled) / float64(w.ReasonSamples))
		for n, k := range t.perReason {
			w.ByReason[n] = float64(k) / float64(w.ReasonSamples)
		}
	}
	if w.PowerCapW != nil && t.pN > 0 {
		at := 0
		for _, s := range ss {
			if s.PowerW != nil && *s.PowerW >= AtCapFraction**w.PowerCapW {
				at++
			}
		}
		w.AtCapShare = fptr(float64(at) / t.pN)
	}
	if t.firstU != nil {
		w.ECCUncorrectedNew = fptr(math.Max(0, *t.lastU-*t.firstU))
	}
	if t.firstC != nil {
		w.ECCCorrectedNew = fptr(math.Max(0, *t.lastC-*t.firstC))
	}
	return w
}

// cardTally gathers the sums and counts behind a card's means, shares and
// ECC rises.
type cardTally struct {
	tSum, tN, pSum, pN, uSum, uN float64
	throttled                    int
	perReason                    map[string]int
	firstU, lastU, firstC, lastC *float64
}

// add takes one sample: its extremes go to w at once, its sums to the tally.
func (t *cardTally) add(w *CardWatch, s Sample) {
	if w.UUID == "" {
		w.UUID = s.UUID
	}
	if s.TempC != nil {
		w.MaxTempC = maxp(w.MaxTempC, *s.TempC)
		t.tSum += *s.TempC
		t.tN++
	}
	if s.PowerW != nil {
		w.MaxPowerW = maxp(w.MaxPowerW, *s.PowerW)
		t.pSum += *s.PowerW
		t.pN++
	}
	if s.PowerLimitW != nil {
		w.PowerCapW = maxp(w.PowerCapW, *s.PowerLimitW)
	}
	if s.SMClockMHz != nil {
		w.MaxSMClockMHz = maxp(w.MaxSMClockMHz, *s.SMClockMHz)
		w.MinSMClockMHz = minp(w.MinSMClockMHz, *s.SMClockMHz)
	}
	if s.UtilGPU != nil {
		t.uSum += *s.UtilGPU
		t.uN++
	}
	if s.Reasons != nil {
		w.ReasonSamples++
		if *s.Reasons&ThrottleMask != 0 {
			t.throttled++
		}
		for _, r := range Throttling {
			if *s.Reasons&r.Bit != 0 {
				t.perReason[r.Name]++
			}
		}
	}
	if s.ECCUncorrected != nil {
		if t.firstU == nil {
			t.firstU = s.ECCUncorrected
		}
		t.lastU = s.ECCUncorrected
	}
	if s.ECCCorrected != nil {
		if t.firstC == nil {
			t.firstC = s.ECCCorrected
		}
		t.lastC = s.ECCCorrected
	}
}

func maxp(p *float64, v float64) *float64 {
	if p == nil || v > *p {
		return fptr(v)
	}
	return p
}

func minp(p *float64, v float64) *float64 {
	if p == nil || v < *p {
		return fptr(v)
	}
	return p
}

// CheckWatch checks the watch keys of the contract (max_temp_c,
// max_throttle_share) on the hottest and the most throttled card.
func CheckWatch(ct Contract, cards []CardWatch) []Check {
	var out []Check
	if ct.MaxTempC != nil {
		out = append(out, worstCheck(CheckMaxTempC, *ct.MaxTempC, cards, func(w CardWatch) *float64 { return w.MaxTempC },
			func(w CardWatch) string { return fmt.Sprintf("card %d reached %.0f °C", w.Index, *w.MaxTempC) },
			NoData+": no temperature sampled", func(v float64) any { return v }))
	}
	if ct.MaxThrottleShare != nil {
		out = append(out, worstCheck(CheckMaxThrottleShare, *ct.MaxThrottleShare, cards, func(w CardWatch) *float64 { return w.ThrottleShare },
			func(w CardWatch) string {
				var rs []string
				for _, r := range Throttling {
					if v, ok := w.ByReason[r.Name]; ok {
						rs = append(rs, fmt.Sprintf("%s %.1f%%", r.Name, v*100))
					}
				}
				return fmt.Sprintf("card %d throttled %.1f%% of the time (%s)", w.Index, *w.ThrottleShare*100, strings.Join(rs, ", "))
			},
			NoData+": no throttle reasons sampled", func(v float64) any { return round(v, 4) }))
	}
	return out
}

// worstCheck checks every card's figure (get; nil: not sampled) against
// most; why says what a card above it did. Measured is the worst card's
// figure, as measured puts it; noData is the note when no card has one.
func worstCheck(name string, most float64, cards []CardWatch, get func(CardWatch) *float64, why func(CardWatch) string,
	noData string, measured func(float64) any) Check {
	c := Check{Name: name, Required: most}
	var worst *float64
	var bad []string
	for _, w := range cards {
		v := get(w)
		if v == nil {
			continue
		}
		worst = maxp(worst, *v)
		if *v > most {
			bad = append(bad, why(w))
		}
	}
	if worst == nil {
		c.Note = noData
	} else {
		c.Measured = measured(*worst)
		c.Pass = len(bad) == 0
		c.Note = notes(bad)
	}
	return c
}

// WatchSchema names the document of `gpu --report`.
const WatchSchema = "linecheck.gpu-watch/v1"

// WatchDoc is the `gpu --report` document.
type WatchDoc struct {
	Schema  string      `json:"schema"`
	Source  string      `json:"source"`
	Cards   []CardWatch `json:"cards"`
	Xid     []Xid       `json:"xid"`
	Checks  []Check     `json:"checks"`
	Verdict string      `json:"verdict"`
	// Samples are kept for the temperature curve (not in the JSON: the
	// journal or the CSV has them).
	Samples []Sample `json:"-"`
}

// NewWatchDoc summarises samples and checks the contract's watch keys.
func NewWatchDoc(source string, samples []Sample, xids []Xid, ct *Contract) WatchDoc {
	d := WatchDoc{Schema: WatchSchema, Source: source, Cards: Summarize(samples), Xid: xids, Checks: []Check{}, Samples: samples}
	if d.Xid == nil {
		d.Xid = []Xid{}
	}
	if ct != nil {
		d.Checks = CheckWatch(*ct, d.Cards)
	}
	d.Verdict = Verdict(d.Checks)
	return d
}

// xidLine matches the driver's Xid message in the kernel log:
// "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python, GPU has fallen off the bus."
var xidLine = regexp.MustCompile(`NVRM: Xid \(PCI:([0-9A-Fa-f:.]+)\): (\d+),?\s*(.*)$`)

// ParseXid reads one kernel log message; ok is false when it is no Xid.
func ParseXid(msg string, at time.Time) (Xid, bool) {
	m := xidLine.FindStringSubmatch(strings.TrimSpace(msg))
	if m == nil {
		return Xid{}, false
	}
	code, err := strconv.Atoi(m[2])
	if err != nil {
		return Xid{}, false
	}
	return Xid{Time: at, BusID: normBusID(m[1]), Code: code, Text: strings.TrimSpace(m[3])}, true
}
