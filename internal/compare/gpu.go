package compare

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/gpu"
)

// GPUDelivery is what a candidate's recorded nvidia-smi outputs
// (recorded.gpu) say of the machine, checked against its gpu: block: the
// delivery verdict, beside the line's.
type GPUDelivery struct {
	// Source is the directory read.
	Source string `json:"source"`
	Cards  int    `json:"cards"`
	// Model is what was delivered ("8 × NVIDIA H100 80GB HBM3 (SXM5)"), "" when no input names it.
	Model string `json:"model"`
	// Interconnect is the topo matrix's class ("" without a matrix).
	Interconnect string      `json:"interconnect"`
	Checks       []gpu.Check `json:"checks"`
	// Verdict is pass, fail, or none (no gpu: block to check against).
	Verdict string `json:"verdict"`
	// PerDeliveredCardHour is the monthly total in the ranking currency
	// over the used hours and the cards delivered (null without cards,
	// hours or a monthly cost).
	PerDeliveredCardHour *Money `json:"per_delivered_card_hour"`
}

// Failed names the checks that failed.
func (g *GPUDelivery) Failed() []string {
	var out []string
	for _, c := range g.Checks {
		if !c.Pass {
			out = append(out, c.Name)
		}
	}
	return out
}

// deliveryOf reads recorded.gpu and checks it against the gpu: block.
func deliveryOf(c *Candidate) (*GPUDelivery, error) {
	if c.Recorded.GPU == "" {
		return nil, nil
	}
	files, err := gpu.FromDir(c.Recorded.GPU)
	if err != nil {
		return nil, fmt.Errorf("%s: recorded.gpu: %w", c.Name, err)
	}
	m, err := gpu.Read(files)
	if err != nil {
		return nil, fmt.Errorf("%s: recorded.gpu: %w", c.Name, err)
	}
	d := gpu.NewDoc(m, c.GPU)
	out := &GPUDelivery{Source: c.Recorded.GPU, Cards: len(m.Cards), Checks: d.Checks, Verdict: d.Verdict}
	names := map[string]int{}
	var order []string
	for _, cd := range m.Cards {
		if cd.Name == "" {
			continue
		}
		k := fmt.Sprintf("%s (%s)", cd.Name, cd.FormFactor)
		if names[k] == 0 {
			order = append(order, k)
		}
		names[k]++
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%d × %s", names[k], k))
	}
	out.Model = strings.Join(parts, ", ")
	if d.Interconnect != nil {
		out.Interconnect = d.Interconnect.Kind
	}
	return out, nil
}

// perDeliveredCardHour is the monthly total over the hours and the cards
// delivered: what one card the buyer can use costs per hour.
func perDeliveredCardHour(e *Evaluation, periodHours float64) *Money {
	g := e.GPU
	if g == nil || g.Cards == 0 || e.Monthly == nil {
		return nil
	}
	hours := periodHours
	if e.Usage != nil && e.Usage.UsedHours > 0 {
		hours = e.Usage.UsedHours
	}
	if hours <= 0 {
		return nil
	}
	conv := e.Monthly.Converted
	if !conv.Valid() {
		return nil
	}
	per := conv.Amount.DivRound(decimal.NewFromFloat(hours).Mul(decimal.NewFromInt(int64(g.Cards))), 24)
	m := billing.MoneyOf(per, conv.Currency).Rounded()
	return &m
}
