package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// compare --lint puts each candidate's quote lint among its warnings. From
// samples/offers.yaml by reading: hk-cn2 has storage, IPs and support
// (remote hands) but no snapshot or backup item; hk-bgp has storage and
// IPs only.
func TestCompareLintWarnsPerCandidate(t *testing.T) {
	out, stderr, code := lcRun(t, "compare", "--offline", "--lint", "--format", "json", "../../samples/candidates.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Candidates []struct {
			Name     string   `json:"name"`
			Warnings []string `json:"warnings"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"hk-cn2-gia": {"snapshots or backups"}, "hk-bgp": {"snapshots or backups", "support"}}
	for _, c := range doc.Candidates {
		w, ok := want[c.Name]
		if !ok {
			continue
		}
		var got []string
		for _, x := range c.Warnings {
			if strings.HasPrefix(x, "lint: ") {
				_, item, _ := strings.Cut(x, "the quote has no ")
				item, _, _ = strings.Cut(item, " item:")
				got = append(got, item)
			}
		}
		if strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("%s: lint %q, want %q (%v)", c.Name, got, w, c.Warnings)
		}
	}
}
