package verdict

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/host"
	"github.com/linecheck/linecheck/internal/interconnect"
	"github.com/linecheck/linecheck/internal/trial"
)

// HostDelivery is what a candidate's trial bundle (recorded.trial) says
// of the machine's delivery form and inventory, checked against its host:
// block.
type HostDelivery struct {
	// Source is the bundle directory read.
	Source     string `json:"source"`
	Form       string `json:"form"`
	Hypervisor string `json:"hypervisor,omitempty"`
	Container  string `json:"container,omitempty"`
	// Evidence is the markers the trial found for the form.
	Evidence []string     `json:"evidence"`
	Checks   []host.Check `json:"checks"`
	// Verdict is pass, fail, or none (no host: block to check against).
	Verdict string `json:"verdict"`
}

// Failed names the checks that failed.
func (h *HostDelivery) Failed() []string {
	var out []string
	for _, c := range h.Checks {
		if !c.Pass {
			out = append(out, c.Name)
		}
	}
	return out
}

// hostDeliveryOf reads recorded.trial's manifest (every file's sha256
// verified) and host.json, and checks them against the host: block.
func hostDeliveryOf(c *candidates.Candidate) (*HostDelivery, error) {
	dir := c.Recorded.Trial
	if dir == "" {
		return nil, nil
	}
	if _, err := trial.ReadManifest(dir); err != nil {
		return nil, fmt.Errorf("%s: recorded.trial: %w", c.Name, err)
	}
	p := filepath.Join(dir, trial.HostFile)
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return nil, nil // the trial stopped before its host part
	} else if err != nil {
		return nil, fmt.Errorf("%s: recorded.trial: %w", c.Name, err)
	}
	var rec trial.HostRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: recorded.trial: %s: %w", c.Name, p, err)
	}
	d := &HostDelivery{Source: dir, Form: rec.Form.Kind, Hypervisor: rec.Form.Hypervisor, Container: rec.Form.Container,
		Evidence: rec.Form.Evidence, Checks: []host.Check{}}
	if c.Host != nil {
		d.Checks = host.CheckHost(*c.Host, rec.Form, rec.Inventory)
	}
	d.Verdict = host.Verdict(d.Checks)
	return d, nil
}

// EvaluateDelivery reads the candidate's recorded delivery (recorded.gpu
// against gpu:, recorded.trial's host.json against host:) into e: GPU,
// Host, and for each failed part a warning and, unless advisory
// (--advisory-delivery), its name in DeliveryFailed, which fails the
// candidate. compare and the TUI call it, so both judge a delivery alike.
func EvaluateDelivery(e *Evaluation, c *candidates.Candidate, advisory bool) error {
	var err error
	if e.GPU, err = deliveryOf(c); err != nil {
		return err
	}
	if e.Host, err = hostDeliveryOf(c); err != nil {
		return err
	}
	fail := func(part, what string, failed []string, source string) {
		w := what + ": " + strings.Join(failed, ", ") + " (" + source + ")"
		if advisory {
			w += "; advisory only (--advisory-delivery)"
		} else {
			e.DeliveryFailed = append(e.DeliveryFailed, part)
			w += "; the candidate fails"
		}
		e.Warnings = append(e.Warnings, w)
	}
	if e.Interconnect, err = interconnectDeliveryOf(c, e.GPU); err != nil {
		return err
	}
	if e.GPU != nil && e.GPU.Verdict == "fail" {
		fail("gpu", "GPU delivery fails the gpu: block", e.GPU.Failed(), "recorded.gpu "+e.GPU.Source)
	}
	if e.Host != nil && e.Host.Verdict == "fail" {
		fail("host", "host delivery fails the host: block", e.Host.Failed(), "recorded.trial "+e.Host.Source)
	}
	if e.Interconnect != nil && e.Interconnect.Verdict == "fail" {
		fail("interconnect", "interconnect delivery fails", e.Interconnect.Failed(), "recorded.trial "+e.Interconnect.Source)
	}
	return nil
}

// InterconnectDelivery is what a trial bundle's interconnect/ outputs say,
// checked against the interconnect: block and the cards' form factor
// (interconnect.CheckAll).
type InterconnectDelivery struct {
	Source string `json:"source"`
	// BusBWGbps is the all-reduce bus bandwidth at the largest size, null
	// without an all_reduce_perf output.
	BusBWGbps *float64             `json:"busbw_gbps"`
	Checks    []interconnect.Check `json:"checks"`
	// Verdict is pass, fail, or none (nothing to check).
	Verdict string `json:"verdict"`
}

// Failed names the checks that failed.
func (d *InterconnectDelivery) Failed() []string {
	var out []string
	for _, c := range d.Checks {
		if !c.Pass {
			out = append(out, c.Name)
		}
	}
	return out
}

// interconnectDeliveryOf reads recorded.trial's interconnect/ (whichever
// tools' outputs are there: trial.ReadInterconnect); nil without a bundle, or
// when the bundle has none and the candidate orders nothing of it.
func interconnectDeliveryOf(c *candidates.Candidate, g *GPUDelivery) (*InterconnectDelivery, error) {
	dir := c.Recorded.Trial
	if dir == "" {
		return nil, nil
	}
	m, err := trial.ReadInterconnect(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: recorded.trial: %w", c.Name, err)
	}
	if !m.Ran() && c.Interconnect == nil {
		return nil, nil
	}
	ct := interconnect.Contract{}
	if c.Interconnect != nil {
		ct = *c.Interconnect
	}
	form := ""
	if g != nil {
		form = g.formFactor
	}
	d := &InterconnectDelivery{Source: dir, Checks: interconnect.CheckAll(ct, m, form)}
	if m.AllReduce != nil {
		d.BusBWGbps = m.AllReduce.BusBWAtLargest()
	}
	d.Verdict = "none"
	if len(d.Checks) > 0 {
		d.Verdict = "pass"
		if len(d.Failed()) > 0 {
			d.Verdict = "fail"
		}
	}
	return d, nil
}
