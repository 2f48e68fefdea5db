package stats

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestNearestRankEdgeSizes(t *testing.T) {
	// values 1..n: the nearest-rank p95 is ceil(0.95·n), computed by hand.
	cases := []struct{ n, want int }{{1, 1}, {19, 19}, {20, 19}, {30, 29}, {100, 95}, {101, 96}}
	for _, c := range cases {
		v := make([]float64, c.n)
		for i := range v {
			v[i] = float64(i + 1)
		}
		if got := NearestRank(v, 95); got != float64(c.want) {
			t.Errorf("n=%d: p95 = %v, want %d", c.n, got, c.want)
		}
	}
	if got := NearestRank(nil, 95); got != 0 {
		t.Errorf("empty: %v", got)
	}
}

func TestSummarizeHandComputed(t *testing.T) {
	// RTTs 10, 12, 11, 15 ms. Differences 2, 1, 4.
	// rfc3550: J1 = 2/16 = 0.125; J2 = 0.125 + (1-0.125)/16 = 0.1796875;
	// J3 = 0.1796875 + (4-0.1796875)/16 = 0.418457031...
	s, j := Summarize([]float64{10, 12, 11, 15})
	if s.Min != 10 || s.Max != 15 || !near(s.Avg, 12) {
		t.Errorf("min/avg/max = %v/%v/%v", s.Min, s.Avg, s.Max)
	}
	// sample stdev: deviations -2,0,-1,3 → ss = 14, /3 → sqrt(4.6667)
	if !near(s.Stdev, math.Sqrt(14.0/3)) {
		t.Errorf("stdev = %v", s.Stdev)
	}
	if s.P50 != 11 || s.P95 != 15 || s.P99 != 15 {
		t.Errorf("p50/p95/p99 = %v/%v/%v", s.P50, s.P95, s.P99)
	}
	if !near(j.RFC3550, 0.1796875+(4-0.1796875)/16) {
		t.Errorf("rfc3550 = %v", j.RFC3550)
	}
	if !near(j.MeanAbs, 7.0/3) {
		t.Errorf("mean_abs = %v", j.MeanAbs)
	}
	if j.PDVP95 != 5 {
		t.Errorf("pdv_p95 = %v", j.PDVP95)
	}
}

func TestJitterConstantStepIsRFCValue(t *testing.T) {
	// A constant 1 ms alternation converges to J = 1 ms (mtr would show ≈16).
	r := make([]float64, 2000)
	for i := range r {
		r[i] = 10 + float64(i%2)
	}
	_, j := Summarize(r)
	if math.Abs(j.RFC3550-1) > 1e-6 {
		t.Errorf("rfc3550 = %v, want 1", j.RFC3550)
	}
	if _, j1 := Summarize([]float64{777}); j1.RFC3550 != 0 || j1.MeanAbs != 0 {
		t.Errorf("a single sample has no jitter: %+v", j1)
	}
}

// Rank against a float ceil(p/100·n) over every size up to 100,000 for the
// percentiles linecheck uses (the float form is exact at these sizes but
// for the ranks the integer form guards against).
func TestRankMatchesCeil(t *testing.T) {
	if Rank(0, 95) != 0 || Rank(-1, 50) != 0 {
		t.Error("no values: want rank 0")
	}
	for _, p := range []float64{5, 50, 95, 99} {
		for n := 1; n <= 100000; n++ {
			want := int(math.Ceil(math.Round(p*10) * float64(n) / 1000))
			want = min(max(want, 1), n)
			if got := Rank(n, p); got != want {
				t.Fatalf("Rank(%d, %v) = %d, want %d", n, p, got, want)
			}
		}
	}
	// The hand cases billing's default and the bw percentiles rely on.
	for _, c := range []struct {
		n    int
		p    float64
		want int
	}{{20, 95, 19}, {20, 5, 1}, {21, 5, 2}, {10, 50, 5}, {11, 50, 6}, {8640, 95, 8208}, {1, 99, 1}} {
		if got := Rank(c.n, c.p); got != c.want {
			t.Errorf("Rank(%d, %v) = %d, want %d", c.n, c.p, got, c.want)
		}
	}
}

// The nearest-rank percentile is written once, here: no production file
// elsewhere declares a nearest-rank or percentile function of its own or
// computes a rank as ceil(q·n) in floats. billing.Percentile95 picks among
// the billing methods (its nearest-rank default calls Rank) and stays.
func TestNearestRankWrittenOnce(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	ceil := regexp.MustCompile(`math\.Ceil\(\s*\w+\s*\*\s*float64\(`)
	name := regexp.MustCompile(`(?i)^(nearest\w*|percentile\w*|\w*nearestrank\w*)$`)
	seen := 0
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.HasPrefix(rel, filepath.Join("internal", "stats")) {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, 0)
		if err != nil {
			return err
		}
		seen++
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && name.MatchString(fn.Name.Name) && fn.Name.Name != "Percentile95" {
				t.Errorf("%s: func %s: the nearest-rank percentile is stats.NearestRank (stats.Rank)", rel, fn.Name.Name)
			}
		}
		if loc := ceil.FindIndex(src); loc != nil {
			t.Errorf("%s: %s: a rank computed as ceil(q·n) in floats: use stats.Rank", rel, src[loc[0]:loc[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 50 {
		t.Fatalf("only %d production files: the walk missed the tree", seen)
	}
}
