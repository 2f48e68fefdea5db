package promclient

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// Step is the evaluation step of billing queries: one point per billing slot.
const Step = billing.SlotSeconds * time.Second

// BillingRange returns the evaluation times that cover the slots of the
// period [from, to): a rate at t covers (t−300, t], so the slot starting at s
// is read at s+300, and the range runs from from+300 to to.
func BillingRange(from, to time.Time) (start, end time.Time) {
	return from.Add(Step), to
}

// FetchBilling runs the inbound and outbound queries (each giving bit/s, such
// as rate(ifHCInOctets[5m])*8) over the period [from, to) and returns one
// billing series per label set, named by its labels.
func (c *Client) FetchBilling(ctx context.Context, queryIn, queryOut string, from, to time.Time) ([]*billing.Series, error) {
	if from.Unix()%billing.SlotSeconds != 0 || to.Unix()%billing.SlotSeconds != 0 {
		return nil, fmt.Errorf("period %s – %s: must start and end on a 5-minute boundary", from, to)
	}
	start, end := BillingRange(from, to)
	in, err := c.QueryRange(ctx, queryIn, start, end, Step)
	if err != nil {
		return nil, fmt.Errorf("--query-in: %w", err)
	}
	out, err := c.QueryRange(ctx, queryOut, start, end, Step)
	if err != nil {
		return nil, fmt.Errorf("--query-out: %w", err)
	}
	return ToBilling(in, out, c.Source())
}

// Source is the server URL as reports show it: without any user or password.
func (c *Client) Source() string {
	u := *c.base
	u.User = nil
	return u.String()
}

// ToBilling pairs the inbound and outbound results by label set (metric names
// left out, as rate() drops them anyway; a single series on each side pairs
// whatever its labels) and converts bit/s at t into bytes of the slot
// starting at t−300: bytes = bit/s · 300 / 8. A slot is present when both
// directions have a value for it; one-sided slots are gaps, counted in the
// series' warnings.
func ToBilling(in, out []Series, source string) ([]*billing.Series, error) {
	if len(in) == 0 && len(out) == 0 {
		return nil, fmt.Errorf("%s: both queries returned no series: check the metric names, labels and the period", source)
	}
	type pair struct{ in, out *Series }
	skip := map[string]bool{"__name__": true}
	pairs := map[string]*pair{}
	var keys []string
	if len(in) == 1 && len(out) == 1 {
		pairs[""] = &pair{&in[0], &out[0]}
		keys = []string{""}
	} else {
		for i := range in {
			k := LabelString(in[i].Labels, skip)
			if pairs[k] != nil {
				return nil, fmt.Errorf("--query-in: two series with labels %s once the metric name is dropped", k)
			}
			pairs[k] = &pair{in: &in[i]}
			keys = append(keys, k)
		}
		for i := range out {
			k := LabelString(out[i].Labels, skip)
			p := pairs[k]
			if p == nil {
				return nil, fmt.Errorf("--query-out: series %s has no --query-in series with the same labels", k)
			}
			if p.out != nil {
				return nil, fmt.Errorf("--query-out: two series with labels %s once the metric name is dropped", k)
			}
			p.out = &out[i]
		}
		for _, k := range keys {
			if pairs[k].out == nil {
				return nil, fmt.Errorf("--query-in: series %s has no --query-out series with the same labels", k)
			}
		}
	}
	sort.Strings(keys)
	labelSets := make([]map[string]string, len(keys))
	for i, k := range keys {
		labelSets[i] = pairs[k].in.Labels
	}
	names := seriesNames(labelSets)
	result := make([]*billing.Series, 0, len(keys))
	for i, k := range keys {
		p := pairs[k]
		s := &billing.Series{Name: names[i], Source: source, Format: "prometheus", Step: billing.SlotSeconds}
		slots := map[int64]*billing.Slot{}
		have := map[int64]int{} // bit 1 = in, bit 2 = out
		add := func(ser *Series, bit int, dir string) error {
			for _, smp := range ser.Samples {
				if smp.T%billing.SlotSeconds != 0 {
					return fmt.Errorf("%s: %s series %s: point at %d is not on the 5-minute grid", source, dir, names[i], smp.T)
				}
				if smp.V < 0 {
					return fmt.Errorf("%s: %s series %s: negative rate %g bit/s at %s", source, dir, names[i], smp.V,
						time.Unix(smp.T, 0).UTC().Format(time.RFC3339))
				}
				st := smp.T - billing.SlotSeconds
				sl := slots[st]
				if sl == nil {
					sl = &billing.Slot{Start: st}
					slots[st] = sl
				}
				b := smp.V * billing.SlotSeconds / 8
				if bit == 1 {
					sl.In = b
				} else {
					sl.Out = b
				}
				have[st] |= bit
			}
			return nil
		}
		if err := add(p.in, 1, "--query-in"); err != nil {
			return nil, err
		}
		if err := add(p.out, 2, "--query-out"); err != nil {
			return nil, err
		}
		starts := make([]int64, 0, len(slots))
		oneSided := 0
		for st := range slots {
			if have[st] == 3 {
				starts = append(starts, st)
			} else {
				oneSided++
			}
		}
		sort.Slice(starts, func(a, b int) bool { return starts[a] < starts[b] })
		s.Slots = make([]billing.Slot, len(starts))
		for j, st := range starts {
			s.Slots[j] = *slots[st]
		}
		if oneSided > 0 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %s: %d slots had a value in one direction only and count as gaps",
				source, names[i], oneSided))
		}
		if n := p.in.Skipped + p.out.Skipped; n > 0 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %s: %d NaN or infinite values count as gaps", source, names[i], n))
		}
		result = append(result, s)
	}
	return result, nil
}

// seriesNames names each label set by the labels that tell them apart:
// ifName alone when it is unique (the snmp_exporter convention), else the
// labels whose values differ between the sets; a single set is named by its
// ifName, or its whole label set.
func seriesNames(sets []map[string]string) []string {
	names := make([]string, len(sets))
	if uniqueLabel(sets, "ifName") {
		for i, s := range sets {
			names[i] = s["ifName"]
		}
		return names
	}
	if len(sets) == 1 {
		names[0] = LabelString(sets[0], map[string]bool{"__name__": true})
		if names[0] == "{}" {
			names[0] = "prometheus"
		}
		return names
	}
	same := map[string]bool{"__name__": true}
	all := map[string]bool{}
	for _, s := range sets {
		for k := range s {
			all[k] = true
		}
	}
	for k := range all {
		v0, ok0 := sets[0][k]
		eq := true
		for _, s := range sets[1:] {
			if v, ok := s[k]; ok != ok0 || v != v0 {
				eq = false
				break
			}
		}
		if eq {
			same[k] = true
		}
	}
	for i, s := range sets {
		names[i] = strings.Trim(LabelString(s, same), "{}")
	}
	return names
}

func uniqueLabel(sets []map[string]string, name string) bool {
	seen := map[string]bool{}
	for _, s := range sets {
		v, ok := s[name]
		if !ok || v == "" || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}
