package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/asn"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

// A replayed sample names every public hop from the bundled dataset (the
// Shanghai metro hop is AS4812, the carrier table's CN2 hops stay CN2) and
// --no-asn leaves all of it out.
func TestTraceNamesHopsAndNoASNLeavesThemOut(t *testing.T) {
	out, code := prRun(t, "trace", "--replay", "../../samples/rec/hk-cn2-gia-forward.json", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var doc struct {
		ASPath  []map[string]any `json:"as_path"`
		ASNData map[string]any   `json:"asn_data"`
		Hops    []struct {
			Responders []map[string]any `json:"responders"`
		} `json:"hops"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	metro, cn2 := doc.Hops[2].Responders[0], doc.Hops[4].Responders[0]
	if metro["addr"] != "61.152.8.45" || metro["asn"] != 4812.0 || metro["as_source"] != "dataset" || metro["country"] != "CN" {
		t.Errorf("TTL 3: %v", metro)
	}
	if cn2["asn"] != 4809.0 || cn2["carrier"] != "CN2" || cn2["as_source"] != "carrier-table" {
		t.Errorf("TTL 5: %v", cn2)
	}
	if p := doc.Hops[0].Responders[0]; p["as_source"] != "private" || p["asn"] != nil {
		t.Errorf("TTL 1: %v", p)
	}
	if len(doc.ASPath) != 2 || doc.ASNData["snapshot"] != "2026-06-17" {
		t.Errorf("as_path %v, asn_data %v", doc.ASPath, doc.ASNData)
	}
	out, code = prRun(t, "trace", "--replay", "../../samples/rec/hk-cn2-gia-forward.json", "--format", "json", "--no-asn")
	if code != 0 {
		t.Fatalf("--no-asn: exit %d", code)
	}
	for _, k := range []string{`"as_name"`, `"as_source"`, `"country"`, `"as_path"`, `"asn_data"`} {
		if strings.Contains(out, k) {
			t.Errorf("--no-asn output has %s", k)
		}
	}
	if !strings.Contains(out, `"line_class": "cn2-gia"`) {
		t.Error("--no-asn lost the line class")
	}
}

// asn update as a user runs it: a failed download exits non-zero, says why
// and writes nothing; --version reports a newer cached copy as used.
func TestASNUpdateCommandAndVersion(t *testing.T) {
	bin := testbin.Linecheck(t)
	cache := t.TempDir()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	cmd := exec.Command(bin, "asn", "update", srv.URL+"/asn-ipv4.csv")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil || !strings.Contains(stderr.String(), "HTTP 404 Not Found") || !strings.Contains(stderr.String(), "unchanged") {
		t.Errorf("asn update against a 404: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(cache, "linecheck", asn.CacheFile)); !os.IsNotExist(err) {
		t.Errorf("a cache file was written: %v", err)
	}

	var b asn.Builder
	if err := b.AddCSV("x.csv", strings.NewReader("1.0.0.0,1.0.0.255,64496,TEST-NET\n")); err != nil {
		t.Fatal(err)
	}
	tb, err := b.Table(time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC), "test copy")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := asn.Encode(&buf, tb); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(cache, "linecheck"), 0o755)
	os.WriteFile(filepath.Join(cache, "linecheck", asn.CacheFile), buf.Bytes(), 0o644)
	cmd = exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "asn data: 2026-06-17, bundled") ||
		!strings.Contains(string(out), "asn cache: 2027-01-02") || !strings.Contains(string(out), "used, newer") {
		t.Errorf("--version with a newer cache: %v\n%s", err, out)
	}
	// The newer copy is what lookups use (asn_data says which).
	cmd = exec.Command(bin, "trace", "--replay", "../../internal/route/testdata/mtr-loopback.json", "--format", "json")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	out, err = cmd.Output()
	if err != nil || !strings.Contains(string(out), `"origin": "cache"`) || !strings.Contains(string(out), `"snapshot": "2027-01-02"`) {
		t.Errorf("trace with a newer cache: %v\n%s", err, out)
	}
}
