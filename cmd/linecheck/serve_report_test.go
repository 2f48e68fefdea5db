package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serve's /compare is compare's own report of serve's snapshot: the
// linecheck.compare/v1 document (live mode, the candidates ranked, each
// with its targets' window figures and SLA checks), the HTML page by
// default, any of compare's formats by ?format=, and a bad format refused
// with the names to use.
func TestServeCompareReportIsTheSnapshot(t *testing.T) {
	port, _ := countingListener(t)
	cfg := filepath.Join(t.TempDir(), "candidates.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("candidates:\n"+
		"  - name: lo\n    targets: [{addr: 127.0.0.1, protocol: tcp, port: %d}]\n"+
		"sla: {rtt_p95_ms: 60, loss: 0.005}\n", port)), 0o644)
	_, _, listen := startServe(t, "--config", cfg, "--count", "3", "--interval", "100ms", "--trace-every", "0")
	var doc struct {
		Schema     string   `json:"schema"`
		Mode       string   `json:"mode"`
		Ranking    []string `json:"ranking"`
		Candidates []struct {
			Name    string `json:"name"`
			Targets []struct {
				Sent int `json:"sent"`
				Recv int `json:"recv"`
			} `json:"targets"`
			SLA struct {
				Pass   bool `json:"pass"`
				Checks []struct {
					Name string `json:"name"`
					Pass bool   `json:"pass"`
				} `json:"checks"`
			} `json:"sla"`
		} `json:"candidates"`
	}
	waitFor(t, 20*time.Second, "a measured cycle in /compare?format=json", func() bool {
		code, body := get(t, "http://"+listen+"/compare?format=json")
		if code != http.StatusOK || json.Unmarshal([]byte(body), &doc) != nil {
			return false
		}
		return len(doc.Candidates) == 1 && len(doc.Candidates[0].Targets) == 1 && doc.Candidates[0].Targets[0].Sent >= 3
	})
	c := doc.Candidates[0]
	if doc.Schema != "linecheck.compare/v1" || doc.Mode != "live" || strings.Join(doc.Ranking, ",") != "lo" || c.Name != "lo" {
		t.Errorf("schema %q mode %q ranking %v candidate %q", doc.Schema, doc.Mode, doc.Ranking, c.Name)
	}
	if tg := c.Targets[0]; tg.Recv != tg.Sent {
		t.Errorf("loopback listener: %d of %d answered", tg.Recv, tg.Sent)
	}
	if len(c.SLA.Checks) != 2 || !c.SLA.Pass {
		t.Errorf("checks %+v pass %v: want rtt_p95_ms and loss passing on loopback", c.SLA.Checks, c.SLA.Pass)
	}
	resp, err := http.Get("http://" + listen + "/compare")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("/compare Content-Type %q, want the HTML page", ct)
	}
	if code, body := get(t, "http://"+listen+"/compare?format=markdown"); code != 200 || !strings.Contains(body, "| lo |") {
		t.Errorf("markdown: %d %q", code, body)
	}
	if code, body := get(t, "http://"+listen+"/compare?format=yaml"); code != http.StatusBadRequest || !strings.Contains(body, "json") {
		t.Errorf("?format=yaml: %d %q, want 400 naming the formats", code, body)
	}
}
