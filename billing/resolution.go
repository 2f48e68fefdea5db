package billing

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// resolutions sums, per step, finest first, the parts of s that meet the
// view's window: rows and hours (nil when s has no parts).
func (v *view) resolutions(s *Series) []Resolution {
	var out []Resolution
	for _, p := range s.Parts {
		n := p.rowsIn(v.from, v.to)
		if n == 0 {
			continue
		}
		secs := min(p.End, v.to) - max(p.Start, v.from)
		i := slices.IndexFunc(out, func(r Resolution) bool { return r.StepS == p.Step })
		if i < 0 {
			i = len(out)
			out = append(out, Resolution{StepS: p.Step})
		}
		out[i].Rows += n
		out[i].Hours += float64(secs) / 3600
	}
	slices.SortFunc(out, func(a, b Resolution) int { return cmp.Compare(a.StepS, b.StepS) })
	for i := range out {
		out[i].Hours = math.Round(out[i].Hours*100) / 100
	}
	return out
}

// resolutionText says which rows a period's traffic came from: "576
// five-minute rows (48 h) and 672 hourly rows (672 h)".
func resolutionText(res []Resolution) string {
	parts := make([]string, len(res))
	for i, r := range res {
		parts[i] = fmt.Sprintf("%d %s rows (%s h)", r.Rows, stepName(r.StepS), strconv.FormatFloat(r.Hours, 'f', -1, 64))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// stepName names a source step as the tools do.
func stepName(step int64) string {
	switch step {
	case 300:
		return "five-minute"
	case 3600:
		return "hourly"
	case 86400:
		return "daily"
	}
	if step%3600 == 0 {
		return fmt.Sprintf("%d-hour", step/3600)
	}
	if step%60 == 0 {
		return fmt.Sprintf("%d-minute", step/60)
	}
	return fmt.Sprintf("%d-second", step)
}

// coarseStep is the coarsest source step that meets the view (Series.Parts
// where the series has them, else its Step).
func coarseStep(s *Series, v *view) int64 {
	if len(s.Parts) == 0 {
		return s.Step
	}
	step := int64(SlotSeconds)
	for _, r := range v.resolutions(s) {
		step = max(step, r.StepS)
	}
	return step
}
