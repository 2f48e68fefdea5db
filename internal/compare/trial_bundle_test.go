package compare

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/trial"
	"github.com/linecheck/linecheck/probe"
	"github.com/linecheck/linecheck/probe/bw"
)

// The trial's line part, end to end on loopback: its throughput server
// serves one test from this process's client, and (as root) its backtrace
// traces 127.0.0.1 as a Shanghai user's carrier. recorded: {trial: DIR}
// then brings both into compare without further keys: the journal as the
// candidate's throughput, the backtrace as its return route; a return:
// given beside the trial is refused.
func TestCompareRecordedTrialLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trial")
	b, err := trial.Create(dir, time.Now(), map[string]string{"linecheck": "test"}, trial.Identity{Hostname: "gpu1"})
	if err != nil {
		t.Fatal(err)
	}
	addrs := make(chan net.Addr, 1)
	line := trial.Line{Listen: "127.0.0.1:0", Duration: 3 * time.Second, OnListen: func(a net.Addr) { addrs <- a }}
	root := os.Geteuid() == 0
	if root {
		line.Targets = []route.BacktraceTarget{{Name: "loopback", Carrier: "telecom", City: "Shanghai", Addr: "127.0.0.1"}}
		line.TargetsFrom, line.Vantage, line.Rate = "test", "gpu1", 100
		line.Trace = probe.TraceConfig{Proto: probe.ICMP, MaxTTL: 4, Cycles: 2, Interval: 20 * time.Millisecond, Timeout: time.Second}
	}
	clientErr := make(chan error, 1)
	go func() {
		a := (<-addrs).(*net.TCPAddr)
		_, err := bw.Run(t.Context(), "127.0.0.1", bw.Config{Port: a.Port, Duration: time.Second})
		clientErr <- err
	}()
	if err := trial.Run(t.Context(), b, trial.Options{Root: "../host/testdata/bare-metal", NVIDIASMI: "linecheck-no-nvidia-smi",
		AllReducePerf: "linecheck-no-arp", IBStat: "linecheck-no-ibstat", NVBandwidth: "linecheck-no-nvb", IBWriteBW: "linecheck-no-ibwr", Line: line}); err != nil {
		t.Fatal(err)
	}
	if err := <-clientErr; err != nil {
		t.Fatal(err)
	}
	m, err := trial.ReadManifest(dir)
	if err != nil || m.Line.BWJournal != "line/bw.journal" || (root && m.Line.Backtrace != "line/backtrace.json") {
		t.Fatalf("manifest line %+v: %v", m.Line, err)
	}

	src, err := os.ReadFile(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	rec := "recorded: {forward: rec/hk-cn2-gia-forward.json, return: rec/hk-cn2-gia-return.mtr.json, probes: rec/hk-cn2-gia-ping.ndjson}"
	withReturn := strings.Replace(string(src), rec, strings.TrimSuffix(rec, "}")+", trial: "+dir+"}", 1)
	if root {
		if _, err := candidates.Parse([]byte(withReturn), samplesFile); err == nil || !strings.Contains(err.Error(), "trial and return: choose one") {
			t.Errorf("return beside the trial's backtrace: %v", err)
		}
	}
	s := strings.Replace(string(src), rec, "recorded: {forward: rec/hk-cn2-gia-forward.json, probes: rec/hk-cn2-gia-ping.ndjson, trial: "+dir+"}", 1)
	if !root {
		s = withReturn
	}
	f, err := candidates.Parse([]byte(s), samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), f, Options{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Candidates {
		if e.Name != "hk-cn2-gia" {
			continue
		}
		tp := e.Throughput
		if tp == nil || tp.Source != filepath.Join(dir, "line", "bw.journal") || tp.Tests != 1 || tp.Mean == nil || *tp.Mean <= 0 {
			t.Errorf("throughput %+v", tp)
		}
		if root {
			// The return route is the bundle's: one hop, 127.0.0.1 itself.
			if e.Route.Return == nil || len(e.Route.Return.Hops) != 1 || e.Route.Return.Hops[0].Responders[0].Addr != "127.0.0.1" {
				t.Errorf("return %+v", e.Route.Return)
			}
		}
		return
	}
	t.Fatal("no hk-cn2-gia")
}

// The generated full 8-card runs (internal/interconnect/testdata) as the
// bundles of the samples' only passing line, ordered with
// nvlink_busbw_gbps 350: the DGX H100's 459.66 GB/s passes and the
// candidate is recommended; the PCIe box's 20.00 fails the interconnect
// delivery and it is not.
func TestCompareRecordedTrialFullAllReduce(t *testing.T) {
	src, err := os.ReadFile(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file        string
		busbw       float64
		verdict     string
		recommended string
	}{
		{"all_reduce_perf-dgx-h100-8x.txt", 459.66, "pass", "hk-cn2-gia"},
		{"all_reduce_perf-pcie-8x.txt", 20.00, "fail", ""},
	} {
		dir := filepath.Join(t.TempDir(), "trial")
		b, err := trial.Create(dir, time.Now(), map[string]string{"linecheck": "test"}, trial.Identity{Hostname: "gpu1"})
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join("../interconnect/testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.WriteFile(filepath.Join(trial.InterconnectDir, trial.AllReduceFile), data); err != nil {
			t.Fatal(err)
		}
		if err := b.Sync(time.Now(), true); err != nil {
			t.Fatal(err)
		}
		old := "probes: rec/hk-cn2-gia-ping.ndjson}"
		s := strings.Replace(string(src), old, strings.TrimSuffix(old, "}")+", trial: "+dir+"}\n    interconnect: {nvlink_busbw_gbps: 350}\n", 1)
		f, err := candidates.Parse([]byte(s), samplesFile)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(t.Context(), f, Options{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range r.Candidates {
			if e.Name == "hk-cn2-gia" {
				if ic := e.Interconnect; ic == nil || ic.Verdict != tc.verdict || *ic.BusBWGbps != tc.busbw {
					t.Errorf("%s: interconnect %+v", tc.file, ic)
				}
			}
		}
		if r.Recommended != tc.recommended {
			t.Errorf("%s: recommended %q, want %q", tc.file, r.Recommended, tc.recommended)
		}
	}
}
