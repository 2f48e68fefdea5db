package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 35: a ping --watch journal holding RTTs below zero (written before
// the send times came from the kernel) is reported, with a warning naming
// its file and line, and without those RTTs; it was refused as an
// "impossible entry … linecheck never writes this".
func TestPingReportOfAJournalWithNegativeRTTs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.ndjson")
	lines := `{"schema":"linecheck.journal/v1","kind":"ping","cycle":1,"run":1,"time":"2026-11-01T00:00:00Z","end":"2026-11-01T00:00:01Z","ping":[{"target":"127.0.0.1","addr":"127.0.0.1","protocol":"icmp","sent":2,"recv":2,"late":0,"duplicates":0,"rtt_ms":[0.05,0.07]}]}
{"schema":"linecheck.journal/v1","kind":"ping","cycle":2,"run":1,"time":"2026-11-01T00:00:10Z","end":"2026-11-01T00:00:11Z","ping":[{"target":"127.0.0.1","addr":"127.0.0.1","protocol":"icmp","sent":2,"recv":2,"late":0,"duplicates":0,"rtt_ms":[-0.002,0.06]}]}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := lcRunCtx(t, context.Background(), "ping", "--report", "--journal", path, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, path+":2: cycle 2: ping 127.0.0.1: 1 RTTs below zero") {
		t.Errorf("stderr:\n%s", errs)
	}
	var rep struct {
		Targets []struct {
			Recv int `json:"recv"`
			RTT  *struct {
				Min float64 `json:"min"`
			} `json:"rtt_ms"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Targets) != 1 || rep.Targets[0].Recv != 4 || rep.Targets[0].RTT == nil || rep.Targets[0].RTT.Min != 0.05 {
		t.Errorf("report %s", out)
	}
}
