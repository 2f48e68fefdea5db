package compare

import (
	"reflect"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/verdict"
)

func cand(name string, pass bool, costCNY string) *verdict.Evaluation {
	e := &verdict.Evaluation{Name: name, SLA: verdict.Verdict{Pass: pass}}
	if costCNY != "" {
		e.Monthly = &verdict.Monthly{Total: costCNY, Currency: "CNY", Converted: billing.MoneyOf(decimal.RequireFromString(costCNY), "CNY"), Rate: "1"}
	}
	return e
}

func TestRankPassingFirstThenByCost(t *testing.T) {
	r := &Result{FXBase: "CNY", Candidates: []*verdict.Evaluation{
		cand("dear-pass", true, "90000.00"),
		cand("cheap-fail", false, "10000.00"),
		cand("cheap-pass", true, "72000.00"),
		cand("mid-fail", false, "50000.00"),
		cand("unpriced-pass", true, ""),
	}}
	Rank(r)
	want := []string{"cheap-pass", "dear-pass", "unpriced-pass", "cheap-fail", "mid-fail"}
	if !reflect.DeepEqual(r.Ranking, want) {
		t.Fatalf("ranking %v, want %v", r.Ranking, want)
	}
	for i, e := range r.Candidates {
		if e.Rank != i+1 || e.Name != want[i] {
			t.Errorf("candidate %d = %s rank %d", i, e.Name, e.Rank)
		}
	}
	if r.Recommended != "cheap-pass" {
		t.Errorf("recommended %q", r.Recommended)
	}
	// 90000 − 72000 = 18000, 18000/90000 = 20 %.
	if s := r.Savings; s == nil || s.Versus != "dear-pass" || s.Amount != "18000.00" || s.Percent != 20 || s.Currency != "CNY" {
		t.Errorf("savings = %+v", r.Savings)
	}
	if !strings.Contains(r.Verdict, "18,000.00 CNY (20.0 %) less than dear-pass") {
		t.Errorf("verdict %q", r.Verdict)
	}
	// cheap-fail (10000) and mid-fail (50000) are cheaper than cheap-pass (72000).
	if len(r.Notes) != 2 || !strings.Contains(r.Notes[0], "cheap-fail would cost 10,000.00 CNY (62,000.00 less than cheap-pass)") ||
		!strings.HasPrefix(r.Notes[1], "mid-fail would cost 50,000.00 CNY (22,000.00 less") {
		t.Errorf("notes %q", r.Notes)
	}
}

func TestRankTiesByName(t *testing.T) {
	r := &Result{Candidates: []*verdict.Evaluation{cand("b", true, "100.00"), cand("a", true, "100.00")}}
	Rank(r)
	if r.Ranking[0] != "a" || r.Savings.Amount != "0.00" {
		t.Errorf("ranking %v savings %+v", r.Ranking, r.Savings)
	}
}

func TestRankNonePasses(t *testing.T) {
	r := &Result{Candidates: []*verdict.Evaluation{cand("x", false, "1.00"), cand("y", false, "2.00")}}
	Rank(r)
	if r.Recommended != "" || r.Savings != nil || r.Passing() != 0 {
		t.Errorf("recommended %q savings %+v", r.Recommended, r.Savings)
	}
	if !strings.Contains(r.Verdict, "no candidate passes") {
		t.Errorf("verdict %q", r.Verdict)
	}
}

func TestRankSinglePasser(t *testing.T) {
	r := &Result{Candidates: []*verdict.Evaluation{cand("x", false, "1.00"), cand("y", true, "2.00")}}
	Rank(r)
	if r.Recommended != "y" || r.Savings != nil || !strings.Contains(r.Verdict, "only passing") {
		t.Errorf("recommended %q savings %+v verdict %q", r.Recommended, r.Savings, r.Verdict)
	}
}

// TestRankDeadCandidateLast: among candidates that fail the SLA, one whose
// probes were never answered (100 % loss) ranks after every measured one,
// however cheap: its failure says nothing about the line.
func TestRankDeadCandidateLast(t *testing.T) {
	measured := func(e *verdict.Evaluation) *verdict.Evaluation { e.Route.Sent, e.Route.Recv = 20, 19; return e }
	dead := cand("dead-cheapest", false, "1000.00")
	dead.Route.Sent, dead.Route.Loss = 20, 1
	r := &Result{FXBase: "CNY", Candidates: []*verdict.Evaluation{
		dead,
		measured(cand("slow-fail", false, "50000.00")),
		measured(cand("lossy-fail", false, "40000.00")),
		measured(cand("pass", true, "90000.00")),
	}}
	Rank(r)
	want := []string{"pass", "lossy-fail", "slow-fail", "dead-cheapest"}
	if !reflect.DeepEqual(r.Ranking, want) {
		t.Fatalf("ranking %v, want %v", r.Ranking, want)
	}
	if !strings.Contains(verdict.RankingRule, "measurements before those without") {
		t.Errorf("RankingRule does not state the rule: %q", verdict.RankingRule)
	}
}
