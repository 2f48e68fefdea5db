package asn

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/asn/data"
)

// eachRange walks list id of t as the ranges it holds: each record with a
// value, up to the next record's key (or the end of the key space).
func eachRange(t *Table, id int, fn func(s, e u128, v uint32)) {
	sc, w := t.sec[id], recordSize[id]
	last := u128{math.MaxUint64, math.MaxUint64}
	switch id {
	case secAS4, secCC4:
		last = u128{0, math.MaxUint32}
	case secAS6hi, secCC6hi:
		last = u128{0, math.MaxUint64}
	}
	for i := range sc.n {
		k, v := t.record(id, sc.off+i*w)
		if v == 0 {
			continue
		}
		e := last
		if i+1 < sc.n {
			nk, _ := t.record(id, sc.off+(i+1)*w)
			e = sub128(nk, u128{0, 1})
		}
		if id == secAS6hi || id == secCC6hi {
			k, e = u128{k.lo, 0}, u128{e.lo, math.MaxUint64}
		}
		fn(k, e, v)
	}
}

// nameOf is entry v (1-based) of t's names.
func nameOf(t *Table, v uint32) AS {
	at := t.sec[secNames].off + 8*int(v-1)
	from := uint32(0)
	if v > 1 {
		from = le32(t.data, at-4)
	}
	text := t.sec[secText].off
	return AS{le32(t.data, at), t.data[text+int(from) : text+int(le32(t.data, at+4))]}
}

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
	for _, id := range []int{secAS4, secAS6hi, secAS6} {
		eachRange(t, id, func(s, e u128, v uint32) {
			n := nameOf(t, v)
			fmt.Fprintf(&a, "%s,%s,%d,%s\n", addr(s, id == secAS4), addr(e, id == secAS4), n.ASN, q(n.Name))
		})
	}
	for _, id := range []int{secCC4, secCC6hi, secCC6} {
		eachRange(t, id, func(s, e u128, v uint32) {
			at := t.sec[secCCs].off + 2*int(v-1)
			fmt.Fprintf(&c, "%s,%s,%s\n", addr(s, id == secCC4), addr(e, id == secCC4), t.data[at:at+2])
		})
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
	v6at := bytes.Index(as, []byte("\n2001")) + 1
	serve("/v4only.csv", as[:v6at])
	// Every third IPv4 row, all IPv6 rows: a third of the IPv4 ranges.
	var third []byte
	for i, l := range bytes.SplitAfter(as[:v6at], []byte("\n")) {
		if i%3 == 0 {
			third = append(third, l...)
		}
	}
	serve("/third.csv", append(third, as[v6at:]...))
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
		{"a family lost (IPv4 only)", u("/v4only.csv", "/country.csv"), 0, "holds no IPv6 AS ranges"},
		{"no country file", u("/asn.csv"), 0, "holds no IPv4 country ranges"},
		{"a third of the IPv4 ranges", u("/third.csv", "/country.csv"), 0, fmt.Sprintf("IPv4 AS ranges, fewer than half the %d", data.Ranges4)},
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
// holding an old copy: the new 10 MB file cannot be written, the old copy
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

// gzipBomb is a gzip stream that expands to copies × len(unit) bytes: unit
// is compressed once into one gzip member and the member repeated (a gzip
// file may hold several members; gzip.Reader reads them all), so building
// a 4 GiB answer costs one compression of unit.
func gzipBomb(t *testing.T, unit []byte, copies int) []byte {
	t.Helper()
	var m bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&m, gzip.BestCompression)
	if _, err := zw.Write(unit); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Repeat(m.Bytes(), copies)
}

// TestUpdateRefusesAnExpandingAnswer serves small gzip files that expand to
// 4 GiB from a local HTTP server (issue 37: 5.8 MB of gzip expanded to 2 GB
// of rows and took 6.3 GB): each is refused with an error naming the bound
// it passed, within a bounded memory, and the old copy stays.
func TestUpdateRefusesAnExpandingAnswer(t *testing.T) {
	const unitSize = 16 << 20
	unit := func(row string) []byte { return bytes.Repeat([]byte(row), unitSize/len(row)) }
	name := strings.Repeat("LONG-NAME ", 20)
	for _, c := range []struct {
		name, row, want string
	}{
		// One endless line: the CSV reader would buffer all of it.
		{"zeros", "0000000000000000", "asn-ipv4.csv.gz:1: a line longer than 4096 bytes"},
		// Rows of 228 bytes: the expanded bound comes first (≈ 880,000 rows).
		{"long rows", "1.0.0.0,1.0.0.255,64496," + name + "\n", fmt.Sprintf("expand to more than %d MiB in all", MaxExpanded>>20)},
		// Rows of 22 bytes: the row bound comes first (66 MB).
		{"short rows", "1.0.0.0,1.0.0.255,1,x\n", fmt.Sprintf("more than %d rows in all the files", MaxRows)},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := unit(c.row)
			body := gzipBomb(t, u, (4<<30)/len(u))
			mux := http.NewServeMux()
			mux.HandleFunc("/asn-ipv4.csv.gz", func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
			srv := httptest.NewServer(mux)
			defer srv.Close()
			dir := t.TempDir()
			old := oldCopy(t, dir)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Update(context.Background(), UpdateOptions{URLs: []string{srv.URL + "/asn-ipv4.csv.gz"}, Dir: dir})
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			alloc, sys := after.TotalAlloc-before.TotalAlloc, int64(after.Sys)-int64(before.Sys)
			t.Logf("%d bytes of gzip for %.2f GiB: refused after %d MiB allocated in all, the runtime's memory grew %d MiB: %v",
				len(body), float64(len(u))*float64((4<<30)/len(u))/(1<<30), alloc>>20, sys>>20, err)
			if alloc > 1<<30 || sys > 768<<20 {
				t.Errorf("%d MiB allocated, %d MiB more from the system: want under 1024 and 768", alloc>>20, sys>>20)
			}
			keptOld(t, dir, old)
		})
	}
}
