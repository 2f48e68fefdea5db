package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// bill --lint / --market: each fixture's one warning reaches the report
// (JSON lint[] and warnings), the complete quote none; a market file
// without sources is bad input, exit 2.
func TestBillLintFixtures(t *testing.T) {
	const dir = "../../billing/testdata/lint/"
	for _, c := range []struct{ fixture, check string }{
		{"complete", ""}, {"lacks-storage", "lacks-item"}, {"idle-storage", "idle-storage"}, {"out-of-band", "card-hour-band"},
	} {
		out, stderr, code := lcRun(t, "bill", "../../samples/traffic/2026-10.csv", "--offers", dir+c.fixture+".yaml", "--market", dir+"market.yaml", "--format", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.fixture, code, stderr)
		}
		var doc struct {
			Lint     []struct{ Offer, Check, Text string } `json:"lint"`
			Warnings []string                              `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		lintWarnings := 0
		for _, w := range doc.Warnings {
			if strings.HasPrefix(w, "lint: ") {
				lintWarnings++
			}
		}
		switch {
		case c.check == "" && (len(doc.Lint) != 0 || lintWarnings != 0):
			t.Errorf("complete: %+v", doc.Lint)
		case c.check != "" && (len(doc.Lint) != 1 || doc.Lint[0].Check != c.check || lintWarnings != 1):
			t.Errorf("%s: %+v, want one %s", c.fixture, doc.Lint, c.check)
		}
	}
	if _, stderr, code := lcRun(t, "bill", "../../samples/traffic/2026-10.csv", "--offers", dir+"complete.yaml", "--market", dir+"complete.yaml"); code != 2 || !strings.Contains(stderr, "--market: ") {
		t.Errorf("an offers file as --market: exit %d, %s", code, stderr)
	}
}
