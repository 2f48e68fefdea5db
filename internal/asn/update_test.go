package asn

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// asCSV writes the AS and country lists of t back as the source's CSV
// files: the bundled snapshot served as a fresh download.
func asCSV(t *Table) (as, cc []byte) {
	var a, c bytes.Buffer
	q := func(s string) string {
		if strings.ContainsAny(s, ",\"") {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
		return s
	}
	ip4 := func(k uint32) netip.Addr {
		return netip.AddrFrom4([4]byte{byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k)})
	}
	ip6 := func(k u128) netip.Addr {
		var b [16]byte
		for i := 0; i < 8; i++ {
			b[i], b[8+i] = byte(k.hi>>(56-8*i)), byte(k.lo>>(56-8*i))
		}
		return netip.AddrFrom16(b)
	}
	for i := range t.start4 {
		n := t.names[t.as4[i]]
		fmt.Fprintf(&a, "%s,%s,%d,%s\n", ip4(t.start4[i]), ip4(t.end4[i]), n.ASN, q(n.Name))
	}
	for i := range t.start6 {
		n := t.names[t.as6[i]]
		fmt.Fprintf(&a, "%s,%s,%d,%s\n", ip6(t.start6[i]), ip6(t.end6[i]), n.ASN, q(n.Name))
	}
	for i := range t.cstart4 {
		fmt.Fprintf(&c, "%s,%s,%s\n", ip4(t.cstart4[i]), ip4(t.cend4[i]), t.ccs[t.cc4[i]])
	}
	for i := range t.cstart6 {
		fmt.Fprintf(&c, "%s,%s,%s\n", ip6(t.cstart6[i]), ip6(t.cend6[i]), t.ccs[t.cc6[i]])
	}
	return a.Bytes(), c.Bytes()
}

// oldCopy writes a small, valid cached copy dated 2026-07-01 and returns its bytes.
func oldCopy(t *testing.T, dir string) []byte {
	t.Helper()
	var b Builder
	if err := b.AddCSV("old.csv", strings.NewReader("1.0.0.0,1.0.0.255,64496,OLD-NET\n")); err != nil {
		t.Fatal(err)
	}
	tb, err := b.Table(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), "old")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, tb); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, CacheFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func keptOld(t *testing.T, dir string, old []byte) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, CacheFile))
	if err != nil || !bytes.Equal(got, old) {
		t.Errorf("the old copy was not kept (%v, %d bytes, want %d)", err, len(got), len(old))
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestUpdateReplacesTheCopyOnlyWithAGoodFile serves the bundled snapshot
// (written back as the source's CSV, dated 2026-11-30) and broken variants
// from a local HTTP server: only the good files replace the cached copy.
func TestUpdateReplacesTheCopyOnlyWithAGoodFile(t *testing.T) {
	tb := bundled(t)
	as, cc := asCSV(tb)
	modified := "Mon, 30 Nov 2026 06:00:00 GMT"
	mux := http.NewServeMux()
	serve := func(p string, body []byte) {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Last-Modified", modified)
			w.Write(body)
		})
	}
	serve("/asn.csv", as)
	serve("/country.csv", cc)
	serve("/wrong.csv", []byte("<!doctype html>\n<html><body>moved</body></html>\n"))
	// Cut inside the last row's name, its length sent honestly: every row
	// has its columns, the last one no newline.
	serve("/half.csv", as[:len(as)/2+bytes.IndexByte(as[len(as)/2:], '\n')-2])
	serve("/v4only.csv", as[:bytes.Index(as, []byte("\n2001"))+1])
	mux.HandleFunc("/truncated.csv", func(w http.ResponseWriter, r *http.Request) {
		// Content-Length promises the whole file; the connection ends halfway.
		w.Header().Set("Content-Length", fmt.Sprint(len(as)))
		w.Write(as[:len(as)/2])
		if hj, ok := w.(http.Hijacker); ok {
			c, _, _ := hj.Hijack()
			c.Close()
		}
	})
	mux.HandleFunc("/slow.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Write(as[:100])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	u := func(p ...string) []string {
		var out []string
		for _, x := range p {
			out = append(out, srv.URL+x)
		}
		return out
	}
	for _, c := range []struct {
		name    string
		urls    []string
		timeout time.Duration
		want    string
	}{
		{"404", u("/missing.csv", "/country.csv"), 0, "HTTP 404 Not Found"},
		{"wrong content", u("/wrong.csv", "/country.csv"), 0, "wrong.csv:1: 1 columns: not an ip-location-db"},
		{"cut mid-row", u("/half.csv", "/country.csv"), 0, "half.csv: ends mid-row"},
		{"connection dropped", u("/truncated.csv", "/country.csv"), 0, "download cut short"},
		{"fewer ranges (IPv4 only)", u("/v4only.csv", "/country.csv"), 0, "fewer than the"},
		{"slow server", u("/slow.csv", "/country.csv"), 300 * time.Millisecond, "no complete download within 300ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			old := oldCopy(t, dir)
			start := time.Now()
			_, err := Update(context.Background(), UpdateOptions{URLs: c.urls, Dir: dir, Timeout: orDefault(c.timeout)})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if c.timeout > 0 && time.Since(start) > 5*time.Second {
				t.Errorf("the slow download took %v", time.Since(start))
			}
			keptOld(t, dir, old)
		})
	}
	t.Run("good file", func(t *testing.T) {
		dir := t.TempDir()
		oldCopy(t, dir)
		res, err := Update(context.Background(), UpdateOptions{URLs: u("/asn.csv", "/country.csv"), Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Used || res.Table.SnapshotDate() != "2026-11-30" {
			t.Errorf("used %v, snapshot %s", res.Used, res.Table.SnapshotDate())
		}
		ch, err := choose(dir)
		if err != nil || ch.Origin != "cache" || ch.Note != "" {
			t.Fatalf("lookups do not use the new copy: %+v %v", ch, err)
		}
		for _, ip := range []string{"61.152.8.45", "1.0.0.1", "2001:200::1", "59.43.182.141"} {
			a, _ := ch.Table.Lookup(netip.MustParseAddr(ip))
			b, _ := tb.Lookup(netip.MustParseAddr(ip))
			if a != b {
				t.Errorf("%s: cache %+v, bundled %+v", ip, a, b)
			}
		}
	})
}

func orDefault(d time.Duration) time.Duration {
	if d == 0 {
		return time.Minute
	}
	return d
}

// TestUpdateOnAFullDiskKeepsTheOldCopy runs the update into a 1 MiB tmpfs
// holding an old copy: the new 2.9 MB file cannot be written, the old copy
// stays whole and no temporary file is left.
func TestUpdateOnAFullDiskKeepsTheOldCopy(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "lc-asn-test", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	old := oldCopy(t, dir)
	as, cc := asCSV(bundled(t))
	mux := http.NewServeMux()
	mux.HandleFunc("/asn.csv", func(w http.ResponseWriter, r *http.Request) { w.Write(as) })
	mux.HandleFunc("/country.csv", func(w http.ResponseWriter, r *http.Request) { w.Write(cc) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, err := Update(context.Background(), UpdateOptions{URLs: []string{srv.URL + "/asn.csv", srv.URL + "/country.csv"}, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), "previous copy is kept") {
		t.Fatalf("error %v, want no space left, previous copy kept", err)
	}
	keptOld(t, dir, old)
}

// TestChooseSkipsADamagedOrOlderCache: a cache file that does not decode, or
// is not newer than the bundled snapshot, is passed over with a note.
func TestChooseSkipsADamagedOrOlderCache(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, CacheFile), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	ch, err := choose(dir)
	if err != nil || ch.Origin != "bundled" || !strings.Contains(ch.Note, "using the bundled snapshot") {
		t.Errorf("damaged: %+v %v", ch, err)
	}
	var b Builder
	_ = b.AddCSV("x.csv", strings.NewReader("1.0.0.0,1.0.0.255,64496,OLD\n"))
	tb, _ := b.Table(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "old")
	var buf bytes.Buffer
	_ = Encode(&buf, tb)
	_ = os.WriteFile(filepath.Join(dir, CacheFile), buf.Bytes(), 0o644)
	ch, err = choose(dir)
	if err != nil || ch.Origin != "bundled" || !strings.Contains(ch.Note, "not newer") {
		t.Errorf("older: %+v %v", ch, err)
	}
}
