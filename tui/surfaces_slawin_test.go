package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/verdict"
)

// wholeOf are the checks of the whole run (window all).
func wholeOf(v verdict.Verdict) []verdict.Check {
	var out []verdict.Check
	for _, c := range v.Checks {
		if c.Window == verdict.WindowAll {
			out = append(out, c)
		}
	}
	return out
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// liveSeries reads one series of serve's /metrics text by its name and
// label pairs (others may be there too).
func liveSeries(text, name string, pairs ...string) (float64, bool) {
	for _, l := range strings.Split(text, "\n") {
		labels, ok := strings.CutPrefix(l, name+"{")
		if !ok {
			continue
		}
		end := strings.LastIndex(labels, "} ")
		if end < 0 {
			continue
		}
		set := map[string]bool{}
		for _, kv := range strings.Split(labels[:end], ",") {
			set[kv] = true
		}
		match := true
		for i := 0; i+1 < len(pairs); i += 2 {
			match = match && set[fmt.Sprintf("%s=%q", pairs[i], pairs[i+1])]
		}
		if match {
			f, err := strconv.ParseFloat(labels[end+2:], 64)
			return f, err == nil
		}
	}
	return 0, false
}

// compareRecorded judges the live run's records (the fake prober's, as the
// TUI received them) as compare judges recordings: each candidate's
// records as its recorded.probes (the ping --stream format), its route
// the recorded forward route the fake traced, the file otherwise path's.
func compareRecorded(t *testing.T, path string, msgs UpdatesMsg, now time.Time) map[string]*verdict.Evaluation {
	t.Helper()
	dir := t.TempDir()
	streams := map[string]*strings.Builder{}
	for _, msg := range msgs {
		if pm, ok := msg.(ProbeMsg); ok {
			if streams[pm.Candidate] == nil {
				streams[pm.Candidate] = &strings.Builder{}
			}
			b, err := json.Marshal(pm.Record)
			if err != nil {
				t.Fatal(err)
			}
			streams[pm.Candidate].Write(append(b, '\n'))
		}
	}
	// The live file with a recorded block for each candidate (after its
	// name line), written as a user would.
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	yml := string(text)
	forward := map[string]string{"gia": liveTraces["127.0.0.2"], "bgp": liveTraces["127.0.0.4"]}
	for name, fwd := range forward {
		if streams[name] == nil {
			t.Fatalf("%s: no records of the run", name)
		}
		p := filepath.Join(dir, name+".ndjson")
		if err := os.WriteFile(p, []byte(streams[name].String()), 0o644); err != nil {
			t.Fatal(err)
		}
		fw, err := filepath.Abs(fwd)
		if err != nil {
			t.Fatal(err)
		}
		line := "  - name: " + name + "\n"
		if !strings.Contains(yml, line) {
			t.Fatalf("no %q in the live file", line)
		}
		yml = strings.Replace(yml, line, line+fmt.Sprintf("    recorded: {probes: %s, forward: %s}\n", p, fw), 1)
	}
	rp := filepath.Join(dir, "recorded.yaml")
	if err := os.WriteFile(rp, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := candidates.Load(rp)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.Run(context.Background(), f, compare.Options{Offline: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*verdict.Evaluation{}
	for _, ev := range res.Candidates {
		out[ev.Name] = ev
	}
	return out
}
