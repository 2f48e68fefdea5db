package billing

import (
	"fmt"
	"strings"
)

// Direction is a direction rule: how a bill combines inbound and outbound
// traffic (definitions in the package doc).
type Direction string

// The direction rules.
const (
	DirGreater Direction = "greater" // the larger of the in and out figures
	DirMax     Direction = "max"     // per slot max(in, out)
	DirSum     Direction = "sum"     // per slot in+out
	DirIn      Direction = "in"      // inbound only
	DirOut     Direction = "out"     // outbound only
)

// Directions are the direction rules, default first.
var Directions = []Direction{DirGreater, DirMax, DirSum, DirIn, DirOut}

// ParseDirection returns the rule named s, or an error naming the rules.
func ParseDirection(s string) (Direction, error) {
	for _, d := range Directions {
		if string(d) == s {
			return d, nil
		}
	}
	return "", fmt.Errorf("direction %q: use one of %s", s, joinNames(Directions))
}

// Apply combines an in and an out figure under the rule. The per-slot rules
// (max, sum, in, out) apply to the bytes or rate of one slot; greater applies
// to two whole-period figures of one statistic (95th in and 95th out, say) —
// it never combines slots (see Parts).
func (d Direction) Apply(in, out float64) float64 {
	switch d {
	case DirIn:
		return in
	case DirOut:
		return out
	case DirSum:
		return in + out
	}
	return max(in, out) // max per slot; greater over the two figures
}

// PerSlot reports whether the rule combines in and out slot by slot before a
// statistic is taken (every rule but greater).
func (d Direction) PerSlot() bool {
	switch d {
	case DirMax, DirSum, DirIn, DirOut:
		return true
	}
	return false
}

// Parts are the per-slot series a statistic is taken over under the rule: the
// rule itself for a per-slot rule, in and out for greater (and "", an offer's
// own rule read as the default), whose figure is the larger of the two.
func (d Direction) Parts() []Direction {
	if d.PerSlot() {
		return []Direction{d}
	}
	return []Direction{DirIn, DirOut}
}

// of is the per-slot value of a per-slot rule in bytes.
func (d Direction) of(s Slot) float64 { return d.Apply(s.In, s.Out) }

// P95Dir returns the method's 95th percentile of in and out (bit/s, any
// order, equal length) combined by the direction rule. It copies its inputs.
func P95Dir(method Method, direction Direction, in, out []float64) float64 {
	best := 0.0
	for i, part := range direction.Parts() {
		v := make([]float64, len(in))
		for k := range in {
			v[k] = part.Apply(in[k], out[k])
		}
		if p := newSortedSample(v, 0).p95(method); i == 0 || p > best {
			best = p
		}
	}
	return best
}

// Names returns the names of a vocabulary (Methods, Directions) as strings.
func Names[T ~string](xs []T) []string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return s
}

func joinNames[T ~string](xs []T) string { return strings.Join(Names(xs), ", ") }
