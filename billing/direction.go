package billing

import (
	"fmt"
	"slices"
	"strings"
)

// Directions are the direction rules, default first (definitions in the package doc).
var Directions = []string{"greater", "max", "sum", "in", "out"}

// CheckDirection returns an error naming the rules when d is not one of them.
func CheckDirection(d string) error {
	if slices.Contains(Directions, d) {
		return nil
	}
	return fmt.Errorf("direction %q: use one of %s", d, strings.Join(Directions, ", "))
}

// P95Dir returns the method's 95th percentile of in and out (bit/s, any
// order, equal length) combined by the direction rule. It copies its inputs.
func P95Dir(method, direction string, in, out []float64) float64 {
	sample := func(f func(a, b float64) float64) float64 {
		v := make([]float64, len(in))
		for i := range in {
			v[i] = f(in[i], out[i])
		}
		return newSortedSample(v, 0).p95(method)
	}
	switch direction {
	case "in":
		return sample(func(a, _ float64) float64 { return a })
	case "out":
		return sample(func(_, b float64) float64 { return b })
	case "max":
		return sample(func(a, b float64) float64 { return max(a, b) })
	case "sum":
		return sample(func(a, b float64) float64 { return a + b })
	default:
		return max(sample(func(a, _ float64) float64 { return a }), sample(func(_, b float64) float64 { return b }))
	}
}

// component is one per-slot value a direction rule is built from.
type component int

const (
	compIn component = iota
	compOut
	compMax
	compSum
)

// components returns the per-slot values a rule needs: greater needs in and
// out (and takes the larger result); the others need one.
func components(direction string) []component {
	switch direction {
	case "in":
		return []component{compIn}
	case "out":
		return []component{compOut}
	case "max":
		return []component{compMax}
	case "sum":
		return []component{compSum}
	}
	return []component{compIn, compOut}
}

func (c component) of(s Slot) float64 {
	switch c {
	case compIn:
		return s.In
	case compOut:
		return s.Out
	case compMax:
		return max(s.In, s.Out)
	}
	return s.In + s.Out
}

func (c component) String() string {
	return [...]string{"in", "out", "max", "sum"}[c]
}
