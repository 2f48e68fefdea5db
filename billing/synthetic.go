package billing

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Shapes are the daily traffic shapes Synthetic draws.
//
//	flat      the same rate all day, with ±5 % noise
//	diurnal   a smooth day: lowest at 04:00, highest at 21:00 local time (consumer traffic)
//	business  high 09:00–18:00 on weekdays, low at night and on weekends (office traffic)
var Shapes = []string{"diurnal", "flat", "business"}

// Synthetic makes a series over p whose outbound volume is monthlyGB (10^9
// bytes) over the whole period and whose highest outbound slot is peakMbps;
// inbound is a tenth of outbound (a server's shape). The noise is a fixed
// pseudo-random sequence, so the same arguments give the same series.
func Synthetic(p Period, monthlyGB, peakMbps float64, shape string) (*Series, error) {
	if !slices.Contains(Shapes, shape) {
		return nil, fmt.Errorf("shape %q: use one of %s", shape, strings.Join(Shapes, ", "))
	}
	n := p.ExpectedSlots(SlotSeconds)
	if n == 0 {
		return nil, fmt.Errorf("synthetic traffic: empty period")
	}
	if !(monthlyGB > 0) || !(peakMbps > 0) {
		return nil, fmt.Errorf("synthetic traffic: monthly GB and peak Mbps must be positive")
	}
	// Every slot at the peak must still fit a billable volume (int64 bytes, ErrTooLarge).
	if maxPeak := maxVolume / 1.1 / float64(n) / SlotSeconds * 8 / 1e6; peakMbps > maxPeak || monthlyGB*1e9 > maxVolume/1.1 {
		return nil, fmt.Errorf("synthetic traffic: %g GB at a %g Mbps peak: %w (at most %.3g Mbps and %.3g GB over this period)",
			monthlyGB, peakMbps, ErrTooLarge, maxPeak, maxVolume/1.1/1e9)
	}
	meanBps := monthlyGB * 8e9 / float64(int64(n)*SlotSeconds)
	peakBps := peakMbps * 1e6
	if meanBps > peakBps {
		return nil, fmt.Errorf("synthetic traffic: %.0f GB over %d slots averages %.1f Mbps, above the %.1f Mbps peak", monthlyGB, n, meanBps/1e6, peakMbps)
	}
	loc := p.location()
	first := p.firstSlot(SlotSeconds)
	prof := make([]float64, n)
	rng := uint64(0x9E3779B97F4A7C15)
	for i := range prof {
		t := time.Unix(first+int64(i)*SlotSeconds, 0).In(loc)
		h := float64(t.Hour()) + float64(t.Minute())/60
		var base float64
		switch shape {
		case "flat":
			base = 1
		case "diurnal":
			// One smooth cycle, lowest at 04:00 and highest at 21:00: two half-cosines of unequal length.
			if h >= 4 && h < 21 {
				base = 0.2 + 0.8*(1-math.Cos(math.Pi*(h-4)/17))/2
			} else {
				x := h - 21
				if x < 0 {
					x += 24
				}
				base = 0.2 + 0.8*(1+math.Cos(math.Pi*x/7))/2
			}
		case "business":
			wd := t.Weekday()
			if wd != time.Saturday && wd != time.Sunday && h >= 9 && h < 18 {
				base = 1
			} else {
				base = 0.15
			}
		}
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		noise := 0.95 + 0.1*float64(rng>>11)/float64(1<<53)
		prof[i] = base * noise
	}
	// Rate = peak × prof^γ / max(prof)^γ; γ is chosen by bisection so the mean
	// matches: γ = 0 is flat at the peak, a large γ concentrates traffic in the top slots.
	pmax := slices.Max(prof)
	mean := func(g float64) float64 {
		var s float64
		for _, x := range prof {
			s += math.Pow(x/pmax, g)
		}
		return s / float64(n) * peakBps
	}
	lo, hi := 0.0, 1.0
	for mean(hi) > meanBps && hi < 1e6 {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if mean(mid) > meanBps {
			lo = mid
		} else {
			hi = mid
		}
	}
	g := (lo + hi) / 2
	s := &Series{Name: "synthetic-" + shape, Source: "synthetic", Format: "synthetic", Step: SlotSeconds, Slots: make([]Slot, n)}
	var total float64
	for i, x := range prof {
		out := peakBps * math.Pow(x/pmax, g) * SlotSeconds / 8
		total += out
		s.Slots[i] = Slot{Start: first + int64(i)*SlotSeconds, Out: out}
	}
	// Rescale exactly to the asked volume (the bisection is close, not exact).
	f := monthlyGB * 1e9 / total
	for i := range s.Slots {
		s.Slots[i].Out *= f
		s.Slots[i].In = s.Slots[i].Out / 10
	}
	return s, nil
}
