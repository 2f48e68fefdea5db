package percentile

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
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	ceil := regexp.MustCompile(`math\.Ceil\(\s*\w+\s*\*\s*float64\(`)
	// "nearest" alone or with rank; not every nearest thing (route's
	// NearestVantage picks the vantage closest to the users).
	name := regexp.MustCompile(`(?i)^(nearest|percentile\w*|\w*nearestrank\w*)$`)
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
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.HasPrefix(rel, "percentile"+string(filepath.Separator)) {
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
				t.Errorf("%s: func %s: the nearest-rank percentile is percentile.NearestRank (percentile.Rank)", rel, fn.Name.Name)
			}
		}
		if loc := ceil.FindIndex(src); loc != nil {
			t.Errorf("%s: %s: a rank computed as ceil(q·n) in floats: use percentile.Rank", rel, src[loc[0]:loc[1]])
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
