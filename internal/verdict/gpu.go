package verdict

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/gpu"
	"github.com/linecheck/linecheck/internal/journal"
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
	// formFactor is the first card's (SXM5, PCIe …), for the interconnect
	// cross-check.
	formFactor string
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
func deliveryOf(c *candidates.Candidate) (*GPUDelivery, error) {
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
	if c.GPU != nil && (c.GPU.MaxTempC != nil || c.GPU.MaxThrottleShare != nil) {
		samples, err := watchSamples(c.Recorded.GPU)
		if err != nil {
			return nil, fmt.Errorf("%s: recorded.gpu: %w", c.Name, err)
		}
		d.Checks = append(d.Checks, gpu.CheckWatch(*c.GPU, gpu.Summarize(samples))...)
		d.Verdict = gpu.Verdict(d.Checks)
	}
	out := &GPUDelivery{Source: c.Recorded.GPU, Cards: len(m.Cards), Checks: d.Checks, Verdict: d.Verdict}
	if len(m.Cards) > 0 {
		out.formFactor = m.Cards[0].FormFactor
	}
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

// PerDeliveredCardHour is the monthly total over the hours and the cards
// delivered: what one card the buyer can use costs per hour.
func PerDeliveredCardHour(e *Evaluation, periodHours float64) *Money {
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

// Files of recorded.gpu that hold samples under load, for the gpu: block's
// max_temp_c and max_throttle_share.
const (
	GPUWatchJournal = "watch.ndjson"  // a gpu --watch journal
	GPUQueryLog     = "query-log.csv" // nvidia-smi --query-gpu=timestamp,… --format=csv -l N, timestamps in UTC
)

// watchSamples reads the samples under load of a recorded.gpu directory;
// none (and no error) when it holds neither file: the checks then fail
// for want of data.
func watchSamples(dir string) ([]gpu.Sample, error) {
	if p := filepath.Join(dir, GPUWatchJournal); fileExists(p) {
		entries, _, err := journal.Read(p)
		if err != nil {
			return nil, err
		}
		var s []gpu.Sample
		for i, e := range entries {
			if e.Kind != journal.KindGPU {
				return nil, fmt.Errorf("%s:%d: a %s journal, not one of gpu --watch", p, i+1, e.Kind)
			}
			s = append(s, e.GPU...)
		}
		return s, nil
	}
	if p := filepath.Join(dir, GPUQueryLog); fileExists(p) {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		return gpu.ParseSamples(b, p, time.UTC)
	}
	return nil, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
