package trial

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newBundle(t *testing.T) *Bundle {
	t.Helper()
	b, err := Create(filepath.Join(t.TempDir(), "bundle"), time.Now(), map[string]string{"linecheck": "test"}, Identity{Hostname: "h"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func partsByName(m *Manifest) map[string]Part {
	out := map[string]Part{}
	for _, p := range m.Parts {
		out[p.Name] = p
	}
	return out
}

// A trial on the bare-metal fixture without nvidia-smi: the host part
// passes its contract, the GPU part says it was not checked and why, the
// baseline's exit status 3 fails it; the manifest lists every file with a
// sha256 that ReadManifest verifies, and the summary exists in every format.
func TestRunWithoutGPU(t *testing.T) {
	c, err := ParseContract([]byte("host: {form: bare-metal, min_cpu_cores: 4, rdma: true}\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := newBundle(t)
	err = Run(t.Context(), b, Options{Root: "../host/testdata/bare-metal", Contract: c, NVIDIASMI: "linecheck-no-such-nvidia-smi",
		Baseline: []string{"sh", "-c", "echo training; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ps := partsByName(m)
	if ps[PartHost].Status != StatusPass || m.Host.Form != "bare-metal" {
		t.Errorf("host %+v, form %q", ps[PartHost], m.Host.Form)
	}
	if g := ps[PartGPU]; g.Status != StatusNotChecked || !strings.Contains(g.Reason, "linecheck-no-such-nvidia-smi not found") {
		t.Errorf("gpu %+v", g)
	}
	if bl := ps[PartBaseline]; bl.Status != StatusFail || bl.Reason != "exit status 3" {
		t.Errorf("baseline %+v", bl)
	}
	if !m.Complete || m.Interrupted || m.Verdict() != StatusFail {
		t.Errorf("complete %v interrupted %v verdict %s", m.Complete, m.Interrupted, m.Verdict())
	}
	var listed []string
	for _, f := range m.Files {
		listed = append(listed, f.Path)
	}
	if got := strings.Join(listed, ","); got != "baseline.json,baseline.log,host.json,summary.html,summary.json,summary.md,summary.txt" {
		t.Errorf("files %s", got)
	}
	log, _ := os.ReadFile(filepath.Join(b.Dir, BaselineLog))
	sum, _ := os.ReadFile(filepath.Join(b.Dir, "summary.txt"))
	if string(log) != "training\n" || !strings.Contains(string(sum), "gpu        not checked: linecheck-no-such-nvidia-smi not found") {
		t.Errorf("log %q\nsummary:\n%s", log, sum)
	}
	// An added file is caught.
	if err := os.WriteFile(filepath.Join(b.Dir, "extra.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadManifest(b.Dir); err == nil || !strings.Contains(err.Error(), "extra.txt is not in the manifest") {
		t.Errorf("added file: %v", err)
	}
	os.Remove(filepath.Join(b.Dir, "extra.txt"))
	// An edited file is caught.
	if err := os.WriteFile(filepath.Join(b.Dir, HostFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadManifest(b.Dir); err == nil || !strings.Contains(err.Error(), "host.json does not match its sha256") {
		t.Errorf("edited bundle: %v", err)
	}
}

// A fake nvidia-smi printing a real saved -q -x (an A100 SXM4 with MIG,
// internal/gpu/testdata) and failing topo -m as a one-card machine does:
// the outputs land in gpu/ under the names gpu --from reads, and the
// order for 8 cards fails on count.
func TestRunGPUPartWithSavedOutputs(t *testing.T) {
	xml, err := filepath.Abs("../gpu/testdata/a100-sxm4-mig/nvidia-smi-q.xml")
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(t.TempDir(), "nvidia-smi")
	script := "#!/bin/sh\nif [ \"$1\" = -q ]; then exec cat " + xml + "; fi\necho 'topo: not supported' >&2; exit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := ParseContract([]byte("gpu: {count: 8}\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := newBundle(t)
	if err := Run(t.Context(), b, Options{Root: t.TempDir(), Contract: c, NVIDIASMI: fake}); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	g := partsByName(m)[PartGPU]
	if g.Status != StatusFail || g.Reason != "fails the gpu: block: count" || strings.Join(g.Files, ",") != "gpu/nvidia-smi-q.xml" {
		t.Errorf("gpu %+v", g)
	}
	want, _ := os.ReadFile(xml)
	got, _ := os.ReadFile(filepath.Join(b.Dir, "gpu", "nvidia-smi-q.xml"))
	if string(got) != string(want) {
		t.Error("gpu/nvidia-smi-q.xml is not nvidia-smi's output")
	}
	if partsByName(m)[PartHost].Status != StatusRan {
		t.Errorf("host without a host: block: %+v", partsByName(m)[PartHost])
	}
	// The driver and CUDA versions the saved output names (its
	// <driver_version> and <cuda_version>) join linecheck's in the manifest.
	if m.Versions["nvidia_driver"] != "510.47.03" || m.Versions["cuda"] != "11.6" {
		t.Errorf("versions %v", m.Versions)
	}
}

// Stopped during the baseline: Run returns the context's error and the
// bundle is whole: the host part as it ran, the baseline interrupted with
// its wall time, the manifest verified, every summary saying interrupted.
func TestRunInterruptedLeavesAReadableBundle(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	b := newBundle(t)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, b, Options{Root: "../host/testdata/kvm-guest", NVIDIASMI: "linecheck-no-such-nvidia-smi", Baseline: []string{"sleep", "30"},
			Progress: func(s string) {
				if strings.HasPrefix(s, "baseline …") {
					time.AfterFunc(300*time.Millisecond, cancel)
				}
			}})
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the baseline was not stopped")
	}
	m, err := ReadManifest(b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ps := partsByName(m)
	if !m.Interrupted || m.Complete || ps[PartHost].Status != StatusRan || ps[PartBaseline].Status != StatusInterrupted || m.Verdict() != "incomplete" {
		t.Errorf("manifest %+v", m)
	}
	for _, f := range []string{"summary.txt", "summary.md", "summary.html"} {
		s, _ := os.ReadFile(filepath.Join(b.Dir, f))
		if !strings.Contains(string(s), "interrupted") {
			t.Errorf("%s does not say interrupted:\n%s", f, s)
		}
	}
}

func TestParseContractRefusesBadInput(t *testing.T) {
	for src, want := range map[string]string{
		"hosts: {form: vm}\n":   `c.yaml:1: "hosts": not a contract key`,
		"host: {form: metal}\n": "c.yaml:1: host.form",
		"gpu: {cuont: 8}\n":     "cuont",
		"{}\n":                  "none of host:, gpu:, interconnect:",
		"- host\n":              "a contract file is a mapping",
	} {
		if _, err := ParseContract([]byte(src), "c.yaml"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

// A bundle is never written into a directory holding other files.
func TestCreateRefusesANonEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	if _, err := Create(dir, time.Now(), nil, Identity{}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("%v", err)
	}
}
