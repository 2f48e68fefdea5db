package compare

import (
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

// Schema names the compare document.
const Schema = "linecheck.compare/v1"

// Result is the linecheck.compare/v1 document: every candidate evaluated,
// ranked, and the recommendation. It is what every report format, the TUI
// and the demo render.
type Result struct {
	Schema string `json:"schema"`
	// Generated is Options.Now.
	Generated time.Time `json:"generated"`
	// Mode is "offline" (recordings only) or "live".
	Mode    string   `json:"mode"`
	Source  string   `json:"source"`
	Vantage string   `json:"vantage"`
	Users   []string `json:"users,omitempty"`
	// Traffic is the profile every offer was priced on.
	Traffic *verdict.TrafficSummary `json:"traffic,omitempty"`
	// Usage is every priced offer's total over the used hours, with the crossings.
	Usage *verdict.UsageSummary `json:"usage,omitempty"`
	// FXBase is the currency all candidates are ranked in; FX lists the rates used.
	FXBase     string                `json:"fx_base"`
	FX         map[string]string     `json:"fx,omitempty"`
	SLA        SLASpec               `json:"sla"`
	Candidates []*verdict.Evaluation `json:"candidates"`
	// Ranking lists candidate names: passing first, then by monthly cost in FXBase.
	Ranking []string `json:"ranking"`
	// Recommended is the cheapest passing candidate; empty when none passes.
	Recommended string `json:"recommended"`
	// Savings says how much cheaper Recommended is than the next passing candidate.
	Savings *verdict.Savings `json:"savings,omitempty"`
	// Horizon states the months every offer is priced over (absent: one month).
	Horizon *verdict.HorizonBasis `json:"horizon,omitempty"`
	// Verdict is a one-line summary of the outcome.
	Verdict string `json:"verdict"`
	// Partial is true when the run was interrupted (Ctrl-C) while probing:
	// the figures cover what was measured until then.
	Partial bool `json:"partial,omitempty"`
	// Notes name the cheaper candidates the SLA rejected, and why.
	Notes    []string `json:"notes,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// ASNData names the IP-to-AS dataset the hops were named from
	// (snapshot, attribution); absent with --no-asn.
	ASNData *route.ASNData `json:"asn_data,omitempty"`
	// HiddenHops is N when the hops at TTL 1..N of every route are masked
	// (--hide-hops N, HideHops); absent when nothing is masked.
	HiddenHops int `json:"hidden_hops,omitempty"`
}

// SLASpec restates the thresholds in the document (null = not required):
// the candidates file's SLA, so that a new threshold needs no field here.
type SLASpec = candidates.SLA

// Passing counts the candidates that pass (Evaluation.Passes): the SLA
// checks all pass and no recorded delivery fails.
func (r *Result) Passing() int {
	n := 0
	for _, e := range r.Candidates {
		if e.Passes() {
			n++
		}
	}
	return n
}

// Rank orders r's candidates (verdict.Rank) and fills its Ranking,
// Recommended, Savings, Verdict and Notes.
func Rank(r *Result) {
	k := verdict.Rank(r.Candidates)
	r.Ranking = append(r.Ranking[:0], k.Order...)
	r.Recommended, r.Savings, r.Verdict, r.Notes = k.Recommended, k.Savings, k.Verdict, k.Notes
}
