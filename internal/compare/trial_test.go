package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/trial"
	"github.com/linecheck/linecheck/internal/verdict"
)

// makeTrial runs a trial on a host fixture root into a new bundle, with a
// fake nvidia-smi printing a real saved A100 -q -x (one card).
func makeTrial(t *testing.T, root string) string {
	t.Helper()
	xml, err := filepath.Abs("../gpu/testdata/a100-sxm4-mig/nvidia-smi-q.xml")
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(t.TempDir(), "nvidia-smi")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n[ \"$1\" = -q ] && exec cat "+xml+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "trial")
	b, err := trial.Create(dir, time.Now(), map[string]string{"linecheck": "test"}, trial.Identity{Hostname: "gpu1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := trial.Run(t.Context(), b, trial.Options{Root: root, NVIDIASMI: fake}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// recorded: {trial: DIR} reads the bundle as every part at once: its
// gpu/ as recorded.gpu, its host.json against the host: block. The
// samples' only passing line, hk-cn2-gia, ordered as bare metal with 8
// cards and delivered as a KVM guest with one A100, fails on both parts
// and is not recommended; a bare-metal trial with an order for one card
// passes both. An edited bundle is refused.
func TestCompareRecordedTrial(t *testing.T) {
	b, err := os.ReadFile(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	run := func(root, order string) (*Result, *verdict.Evaluation, error) {
		dir := makeTrial(t, root)
		old := "probes: rec/hk-cn2-gia-ping.ndjson}"
		s := strings.Replace(string(b), old, strings.TrimSuffix(old, "}")+", trial: "+dir+"}\n    "+order+"\n", 1)
		f, err := candidates.Parse([]byte(s), samplesFile)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(t.Context(), f, Options{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			return nil, nil, err
		}
		for _, e := range r.Candidates {
			if e.Name == "hk-cn2-gia" {
				return r, e, nil
			}
		}
		t.Fatal("no hk-cn2-gia")
		return nil, nil, nil
	}
	r, e, err := run("../host/testdata/kvm-guest", "host: {form: bare-metal}\n    gpu: {count: 8}")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(e.DeliveryFailed, ",") != "gpu,host" || e.Host == nil || e.Host.Form != "vm" || e.Host.Hypervisor != "kvm" || e.GPU == nil || e.GPU.Cards != 1 {
		t.Fatalf("delivery failed %v host %+v gpu %+v", e.DeliveryFailed, e.Host, e.GPU)
	}
	if r.Recommended != "" || r.Passing() != 0 {
		t.Errorf("recommended %q passing %d", r.Recommended, r.Passing())
	}
	noted := false
	for _, n := range r.Notes {
		noted = noted || strings.Contains(n, "hk-cn2-gia passes the SLA but fails its recorded delivery, never recommended: GPU delivery (count), host delivery (form)")
	}
	if !noted {
		t.Errorf("notes %q", r.Notes)
	}

	r, e, err = run("../host/testdata/bare-metal", "host: {form: bare-metal, rdma: true}\n    gpu: {count: 1}")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.DeliveryFailed) != 0 || e.Host.Verdict != "pass" || e.GPU.Verdict != "pass" || r.Recommended != "hk-cn2-gia" {
		t.Errorf("bare metal: failed %v host %+v gpu %s recommended %q", e.DeliveryFailed, e.Host, e.GPU.Verdict, r.Recommended)
	}

	// An edited bundle: host.json no longer matches its sha256.
	dir := makeTrial(t, "../host/testdata/bare-metal")
	if err := os.WriteFile(filepath.Join(dir, trial.HostFile), []byte(`{"form":{"form":"bare-metal"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "probes: rec/hk-cn2-gia-ping.ndjson}", "probes: rec/hk-cn2-gia-ping.ndjson, trial: "+dir+"}", 1)
	f, err := candidates.Parse([]byte(s), samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(t.Context(), f, Options{Offline: true}); err == nil || !strings.Contains(err.Error(), "host.json does not match its sha256") {
		t.Errorf("edited bundle: %v", err)
	}
	// recorded.trial and recorded.gpu together are refused.
	s = strings.Replace(s, ", trial: ", ", gpu: "+dir+", trial: ", 1)
	if _, err := candidates.Parse([]byte(s), samplesFile); err == nil || !strings.Contains(err.Error(), "trial and gpu: choose one") {
		t.Errorf("trial and gpu: %v", err)
	}
}

// The bundle's interconnect/ against the candidate's interconnect: block:
// the transcribed 2 × RTX 2080 Ti all-reduce (21.86 GB/s at 128 MiB) fails
// an order for 350 GB/s; the gpud ibstat's one HDR port meets ib_ports 1.
func TestCompareRecordedTrialInterconnect(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trial")
	bd, err := trial.Create(dir, time.Now(), map[string]string{"linecheck": "test"}, trial.Identity{Hostname: "gpu1"})
	if err != nil {
		t.Fatal(err)
	}
	for src, dst := range map[string]string{"rtx2080ti-2x-nvlink-bridge.txt": trial.AllReduceFile, "ibstat-gpud-mlx5_7.txt": trial.IBStatFile} {
		data, err := os.ReadFile(filepath.Join("../interconnect/testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := bd.WriteFile(filepath.Join(trial.InterconnectDir, dst), data); err != nil {
			t.Fatal(err)
		}
	}
	if err := bd.Sync(time.Now(), true); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	old := "probes: rec/hk-cn2-gia-ping.ndjson}"
	s := strings.Replace(string(b), old, strings.TrimSuffix(old, "}")+", trial: "+dir+"}\n    interconnect: {nvlink_busbw_gbps: 350, ib_ports: 1}\n", 1)
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
		ic := e.Interconnect
		if ic == nil || ic.Verdict != "fail" || strings.Join(ic.Failed(), ",") != "nvlink_busbw_gbps" || *ic.BusBWGbps != 21.86 || strings.Join(e.DeliveryFailed, ",") != "interconnect" {
			t.Fatalf("interconnect %+v, delivery failed %v", ic, e.DeliveryFailed)
		}
	}
	if r.Recommended != "" {
		t.Errorf("recommended %q", r.Recommended)
	}
	// A typo in the block is refused with its line.
	if _, err := candidates.Parse([]byte(strings.Replace(s, "ib_ports:", "ib_port:", 1)), samplesFile); err == nil || !strings.Contains(err.Error(), "ib_port") {
		t.Errorf("%v", err)
	}
}
