package ingest

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/billing"
)

// Helpers shared by the reader tests.

func readStr(name, content string, opts ReadOptions) ([]*billing.Series, error) {
	return Read(strings.NewReader(content), name, opts)
}

func mustRead(t *testing.T, name, content string, opts ReadOptions) []*billing.Series {
	t.Helper()
	ss, err := readStr(name, content, opts)
	if err != nil {
		t.Fatalf("Read(%s): %v", name, err)
	}
	return ss
}

func mustReadFile(t *testing.T, path string, opts ReadOptions) []*billing.Series {
	t.Helper()
	ss, err := ReadFile(path, opts)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", path, err)
	}
	return ss
}

func testdata(name string) string { return filepath.Join("testdata", "readers", name) }

// wantSlots compares a series' slots with the expected ones (start → in, out
// bytes), to a relative 1e-12.
func wantSlots(t *testing.T, s *billing.Series, want []billing.Slot) {
	t.Helper()
	if len(s.Slots) != len(want) {
		t.Fatalf("%s: %d slots, want %d: %+v", s.Name, len(s.Slots), len(want), s.Slots)
	}
	for i, w := range want {
		g := s.Slots[i]
		if g.Start != w.Start || !near(g.In, w.In) || !near(g.Out, w.Out) {
			t.Errorf("%s: slot %d = %+v, want %+v", s.Name, i, g, w)
		}
	}
}

func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

// wantReadErr checks that err is a *ReadError whose message is exactly want.
func wantReadErr(t *testing.T, err error, want string) {
	t.Helper()
	var re *ReadError
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not a *ReadError; want %q", err, err, want)
	}
	if err.Error() != want {
		t.Fatalf("error\n  %q\nwant\n  %q", err.Error(), want)
	}
}

func hasWarning(s *billing.Series, sub string) bool {
	for _, w := range s.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

func TestDetectByContentNotName(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"mrtg_head.log", "mrtg"},
		{"rrdtool_xport_default.xml", "rrdtool-xml"},
		{"rrdtool_xport_showtime_gap.json", "rrdtool-json"},
		{"vnstat_2.10_json_f.json", "vnstat"},
		{"prometheus_query_range_rate_ifHCOutOctets.json", "prometheus"},
	} {
		data, err := os.ReadFile(testdata(tc.file))
		if err != nil {
			t.Fatal(err)
		}
		ss, err := readStr("traffic.dat", string(data), ReadOptions{}) // a name that says nothing
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if ss[0].Format != tc.want {
			t.Errorf("%s: format %s, want %s", tc.file, ss[0].Format, tc.want)
		}
	}
	ss := mustRead(t, "x.json", "timestamp,in_bytes,out_bytes\n0,1,2\n", ReadOptions{})
	if ss[0].Format != "csv" {
		t.Errorf("csv detected as %s", ss[0].Format)
	}
}

func TestUnknownAndEmptyInputs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "f:1: the input is empty: no traffic data to bill"},
		{"  \n\n", "f:1: the input is empty: no traffic data to bill"},
		{"hello world\n", "f:1: not a recognised traffic log (known formats: csv, mrtg, vnstat, rrdtool-xml, rrdtool-json, prometheus; force one with --input)"},
		{`{"foo":1}`, "f:1: JSON that is neither vnstat --json, rrdtool xport --json nor a Prometheus query_range response (known formats: csv, mrtg, vnstat, rrdtool-xml, rrdtool-json, prometheus; force one with --input)"},
		{"<vnstat/>", "f:1: vnstat XML is not read; use vnstat --json (known formats: csv, mrtg, vnstat, rrdtool-xml, rrdtool-json, prometheus; force one with --input)"},
	} {
		_, err := readStr("f", tc.in, ReadOptions{})
		wantReadErr(t, err, tc.want)
	}
	_, err := readStr("f", "", ReadOptions{})
	if !errors.Is(err, ErrEmpty) {
		t.Errorf("empty input: %v does not wrap ErrEmpty", err)
	}
	// An empty regular file, read whole as small files are, names itself
	// (it said "EOF" with no file before).
	empty := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(empty, ReadOptions{})
	if !errors.Is(err, ErrEmpty) || !strings.HasPrefix(err.Error(), empty+":1: the input is empty") {
		t.Errorf("empty file: %v, want %s:1: the input is empty … wrapping ErrEmpty", err, empty)
	}
	_, err = readStr("f", "hello\n", ReadOptions{})
	if !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("unknown input: %v does not wrap ErrUnknownFormat", err)
	}
	if _, err := readStr("f", "x", ReadOptions{Format: "excel"}); err == nil || !strings.Contains(err.Error(), `unknown input format "excel"`) {
		t.Errorf("bad Format option: %v", err)
	}
}

// slot is a billing.Slot written positionally: start, in, out.
func slot(start int64, in, out float64) billing.Slot {
	return billing.Slot{Start: start, In: in, Out: out}
}

// Many files read at once give what reading them one by one gives, in the
// order of the paths; the error is the first failing path's.
func TestReadFilesEqualsOneByOne(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 23 {
		p := filepath.Join(dir, fmt.Sprintf("port%02d.csv", i))
		var b strings.Builder
		b.WriteString("timestamp,in_bytes,out_bytes\n")
		for k := range 300 {
			fmt.Fprintf(&b, "%d,%d,%d\n", 1780272000+k*300, (k*7919+i)%100003, i*k)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	opts := ReadOptions{From: 1780272000, To: 1780272000 + 86400*30}
	got, err := ReadFiles(paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	var want []*billing.Series
	for _, p := range paths {
		want = append(want, mustReadFile(t, p, opts)...)
	}
	if len(got) != len(want) {
		t.Fatalf("%d series, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || !slices.Equal(got[i].Slots, want[i].Slots) {
			t.Fatalf("series %d: %s, want %s (or slots differ)", i, got[i].Name, want[i].Name)
		}
	}
	bad := slices.Clone(paths)
	bad[5] = filepath.Join(dir, "missing.csv")
	bad[17] = filepath.Join(dir, "missing-too.csv")
	if _, err := ReadFiles(bad, opts); err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("err %v, want the first failing path's", err)
	}
}

// A CSV whose last row lacks its newline may have been cut mid-number by a
// writer still at work ("…,20" of "…,2000000"): it is billed as read, with a
// warning naming file:line, read whole, mapped or streamed. With its
// newline no warning is given.
func TestCSVLastLineWithoutNewlineIsNamed(t *testing.T) {
	doc := "timestamp,in_bytes,out_bytes\n1790812800,1000000,2000000\n1790813100,1000000,2000000\n1790813400,1000000,20"
	want := "cut.csv:4: the last line has no newline: it may be cut"
	s := mustRead(t, "cut.csv", doc, ReadOptions{})[0]
	if !hasWarning(s, want) {
		t.Errorf("streamed: no warning %q in %q", want, s.Warnings)
	}
	path := filepath.Join(t.TempDir(), "cut.csv")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	ss, err := ReadFile(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasWarning(ss[0], path+":4: the last line has no newline") {
		t.Errorf("file: no warning in %q", ss[0].Warnings)
	}
	s = mustRead(t, "whole.csv", doc+"00\n", ReadOptions{})[0]
	if hasWarning(s, "no newline") {
		t.Errorf("a whole last line warned: %q", s.Warnings)
	}
}

// A JSON export is decoded whole, so it is bounded (1 GiB): an endless
// vnstat --json stream on stdin stops at the bound with its message instead
// of growing to gigabytes. The test lowers the bound to 1 MiB.
func TestJSONExportIsBounded(t *testing.T) {
	old := maxJSONBytes
	maxJSONBytes = 1 << 20
	t.Cleanup(func() { maxJSONBytes = old })
	endless := io.MultiReader(strings.NewReader(`{"vnstatversion":"2.10","jsonversion":"2","interfaces":[`), zeros{})
	_, err := Read(endless, "-", ReadOptions{Format: "vnstat"})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "-:1: a JSON export larger than 1 MiB") {
		t.Errorf("endless JSON: %v", err)
	}
}

// zeros is an endless stream of spaces (valid JSON white space).
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}
