package gpu

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Check names, as the contract's keys.
const (
	CheckCount            = "count"
	CheckModel            = "model"
	CheckMemoryGiB        = "memory_gib"
	CheckInterconnect     = "interconnect"
	CheckPowerLimitW      = "power_limit_w"
	CheckPCIeGen          = "pcie_gen"
	CheckECC              = "ecc"
	CheckMIG              = "mig"
	CheckMaxTempC         = "max_temp_c"
	CheckMaxThrottleShare = "max_throttle_share"
)

// NoData begins the note of a check that fails for want of a figure: a
// delivery check must not pass on no evidence.
const NoData = "no data"

// Check is one contract key against what was measured. Measured is nil
// when no input gave the figure (the check then fails, with a note).
type Check struct {
	Name     string `json:"name"`
	Required any    `json:"required"`
	Measured any    `json:"measured"`
	Pass     bool   `json:"pass"`
	Note     string `json:"note,omitempty"`
}

// Verdicts of a document.
const (
	VerdictPass = "pass"
	VerdictFail = "fail"
	// VerdictNone: no contract was given, nothing was checked.
	VerdictNone = "none"
)

// Verdict is pass when every check passed, fail when one did not, none
// without checks.
func Verdict(checks []Check) string {
	if len(checks) == 0 {
		return VerdictNone
	}
	for _, c := range checks {
		if !c.Pass {
			return VerdictFail
		}
	}
	return VerdictPass
}

func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

// CheckDelivery checks the machine against the contract's delivery keys
// (count … mig), in the contract's key order.
func CheckDelivery(ct Contract, m *Machine) []Check {
	var out []Check
	cards := m.Cards
	if ct.Count != nil {
		c := Check{Name: CheckCount, Required: *ct.Count, Measured: len(cards), Pass: len(cards) >= *ct.Count}
		if len(cards) < *ct.Count {
			c.Note = fmt.Sprintf("%d cards fewer than ordered", *ct.Count-len(cards))
		}
		out = append(out, c)
	}
	if ct.Model != "" {
		out = append(out, modelCheck(ct.Model, cards))
	}
	if ct.MemoryGiB != nil {
		out = append(out, memoryCheck(*ct.MemoryGiB, cards))
	}
	if ct.Interconnect != "" {
		c := Check{Name: CheckInterconnect, Required: ct.Interconnect}
		switch {
		case m.Topology == nil:
			c.Note = NoData + ": no topo matrix (save nvidia-smi topo -m as topo.txt)"
		default:
			kind, detail := m.Topology.Interconnect()
			c.Measured = kind
			c.Pass = interconnectRank[kind] >= interconnectRank[ct.Interconnect]
			c.Note = detail
		}
		out = append(out, c)
	}
	if ct.PowerLimitW != nil {
		out = append(out, powerLimitCheck(*ct.PowerLimitW, cards))
	}
	if ct.PCIeGen != nil {
		out = append(out, pcieGenCheck(*ct.PCIeGen, cards))
	}
	if ct.ECC != nil {
		out = append(out, modeCheck(CheckECC, *ct.ECC, cards, func(cd Card) string { return cd.ECC }))
	}
	if ct.MIG != nil {
		out = append(out, modeCheck(CheckMIG, *ct.MIG, cards, func(cd Card) string { return cd.MIG }))
	}
	return out
}

// modelCheck: every card is the contract's model; Measured counts the
// product names seen.
func modelCheck(model string, cards []Card) Check {
	md, _ := ParseModel(model)
	c := Check{Name: CheckModel, Required: model, Pass: len(cards) > 0}
	names := map[string]int{}
	var bad []string
	for _, cd := range cards {
		if cd.Name != "" {
			names[fmt.Sprintf("%s (%s)", cd.Name, cd.FormFactor)]++
		}
		if ok, why := MatchModel(md, cd); !ok {
			c.Pass = false
			bad = append(bad, fmt.Sprintf("card %d: %s", cd.Index, why))
		}
	}
	if len(names) > 0 {
		var parts []string
		for n, k := range names {
			parts = append(parts, fmt.Sprintf("%d × %s", k, n))
		}
		sort.Strings(parts)
		c.Measured = strings.Join(parts, ", ")
	} else {
		bad = []string{NoData + ": no product name in the inputs (give nvidia-smi -q -x, -q, or a query CSV with name)"}
	}
	c.Note = notes(bad)
	return c
}

// memoryCheck: every card has the contract's memory, within
// MemoryTolerance; Measured is the smallest.
func memoryCheck(gib float64, cards []Card) Check {
	c := Check{Name: CheckMemoryGiB, Required: gib}
	min, n, bad := math.Inf(1), 0, []string{}
	for _, cd := range cards {
		if cd.MemoryMiB == nil {
			bad = append(bad, fmt.Sprintf("card %d: %s", cd.Index, NoData))
			continue
		}
		g := *cd.MemoryMiB / 1024
		n++
		min = math.Min(min, g)
		if g < gib*(1-MemoryTolerance) {
			bad = append(bad, fmt.Sprintf("card %d: %.1f GiB", cd.Index, g))
		}
	}
	if n > 0 {
		c.Measured = round(min, 2)
	}
	c.Pass = n > 0 && len(bad) == 0
	if n == 0 {
		bad = []string{NoData + ": no memory figure in the inputs"}
	}
	c.Note = notes(bad)
	return c
}

// powerLimitCheck: every card's power limit is at least w.
func powerLimitCheck(w float64, cards []Card) Check {
	return minCheck(CheckPowerLimitW, w, cards, func(cd Card) (float64, bool) {
		if cd.PowerLimitW == nil {
			return 0, false
		}
		return *cd.PowerLimitW, true
	}, func(cd Card, v float64) string {
		s := fmt.Sprintf("card %d: capped at %.0f W", cd.Index, v)
		if cd.DefaultPowerLimitW != nil {
			s += fmt.Sprintf(" (default %.0f W)", *cd.DefaultPowerLimitW)
		}
		return s
	})
}

// pcieGenCheck: every card's link reaches PCIe generation gen.
func pcieGenCheck(gen int, cards []Card) Check {
	c := minCheck(CheckPCIeGen, float64(gen), cards, func(cd Card) (float64, bool) {
		if cd.PCIeGenMax == nil {
			return 0, false
		}
		return float64(*cd.PCIeGenMax), true
	}, func(cd Card, v float64) string { return fmt.Sprintf("card %d: gen %.0f at most", cd.Index, v) })
	// the required value reads as the integer it was written
	c.Required = gen
	if v, ok := c.Measured.(float64); ok {
		c.Measured = int(v)
	}
	return c
}

func notes(s []string) string {
	s = groupCards(s)
	if len(s) > 4 {
		s = append(s[:4:4], fmt.Sprintf("and %d more", len(s)-4))
	}
	return strings.Join(s, "; ")
}

// groupCards folds "card 0: X", "card 1: X" … into "cards 0–7: X": eight
// cards capped alike say it once.
func groupCards(s []string) []string {
	type group struct {
		text string
		idx  []int
	}
	var order []*group
	by := map[string]*group{}
	var out []string
	for _, n := range s {
		var i int
		var rest string
		if k, err := fmt.Sscanf(n, "card %d:", &i); k != 1 || err != nil {
			out = append(out, n)
			continue
		}
		_, rest, _ = strings.Cut(n, ": ")
		g, ok := by[rest]
		if !ok {
			g = &group{text: rest}
			by[rest] = g
			order = append(order, g)
		}
		g.idx = append(g.idx, i)
	}
	var cards []string
	for _, g := range order {
		if len(g.idx) == 1 {
			cards = append(cards, fmt.Sprintf("card %d: %s", g.idx[0], g.text))
			continue
		}
		run := true
		for k := 1; k < len(g.idx); k++ {
			run = run && g.idx[k] == g.idx[k-1]+1
		}
		var who string
		if run {
			who = fmt.Sprintf("%d–%d", g.idx[0], g.idx[len(g.idx)-1])
		} else {
			var p []string
			for _, i := range g.idx {
				p = append(p, fmt.Sprint(i))
			}
			who = strings.Join(p, ", ")
		}
		cards = append(cards, fmt.Sprintf("cards %s: %s", who, g.text))
	}
	return append(cards, out...)
}

// minCheck passes when every card's figure is at least req; measured is the
// lowest.
func minCheck(name string, req float64, cards []Card, get func(Card) (float64, bool), why func(Card, float64) string) Check {
	c := Check{Name: name, Required: req}
	min, n := math.Inf(1), 0
	var bad []string
	for _, cd := range cards {
		v, ok := get(cd)
		if !ok {
			bad = append(bad, fmt.Sprintf("card %d: %s", cd.Index, NoData))
			continue
		}
		n++
		min = math.Min(min, v)
		if v < req {
			bad = append(bad, why(cd, v))
		}
	}
	if n > 0 {
		c.Measured = round(min, 2)
	} else {
		bad = []string{NoData + ": no input gave it"}
	}
	c.Pass = n > 0 && len(bad) == 0
	c.Note = notes(bad)
	return c
}

// modeCheck: want true requires Enabled on every card, false requires it on
// none (N/A, a card without the mode, counts as not enabled).
func modeCheck(name string, want bool, cards []Card, get func(Card) string) Check {
	c := Check{Name: name, Required: want}
	on, known := 0, 0
	var bad []string
	for _, cd := range cards {
		v := get(cd)
		if v == "" {
			bad = append(bad, fmt.Sprintf("card %d: %s", cd.Index, NoData))
			continue
		}
		known++
		if v == "Enabled" {
			on++
		}
		if (v == "Enabled") != want {
			bad = append(bad, fmt.Sprintf("card %d: %s", cd.Index, v))
		}
	}
	switch {
	case known == 0:
		bad = []string{NoData + ": no input gave the mode"}
	case on == known:
		c.Measured = true
	case on == 0:
		c.Measured = false
	default:
		c.Measured = fmt.Sprintf("enabled on %d of %d", on, known)
	}
	c.Pass = known > 0 && len(bad) == 0
	c.Note = notes(bad)
	return c
}

// Doc is the `linecheck gpu` document (schema linecheck.gpu/v1).
type Doc struct {
	Schema string `json:"schema"`
	*Machine
	// Interconnect is the matrix's class and what was seen (nil without topo).
	Interconnect *InterconnectInfo `json:"interconnect"`
	NICAffinity  []NICPath         `json:"nic_affinity"`
	Contract     *Contract         `json:"contract"`
	Checks       []Check           `json:"checks"`
	Verdict      string            `json:"verdict"`
}

// InterconnectInfo is Topology.Interconnect's answer.
type InterconnectInfo struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// NewDoc checks m against ct (nil: no contract) and makes the document.
func NewDoc(m *Machine, ct *Contract) Doc {
	d := Doc{Schema: Schema, Machine: m, Checks: []Check{}}
	if m.Topology != nil {
		k, det := m.Topology.Interconnect()
		d.Interconnect = &InterconnectInfo{k, det}
		d.NICAffinity = m.Topology.NICAffinity()
	}
	if ct != nil {
		d.Contract = ct
		d.Checks = CheckDelivery(*ct, m)
	}
	d.Verdict = Verdict(d.Checks)
	return d
}
