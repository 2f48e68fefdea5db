package exporter

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// expositionByHand lists where the Go source src (named name) writes a
// Prometheus exposition format itself: a string literal holding a "# HELP"
// or "# TYPE" line, or the text format's media type (a hand-made
// negotiation), or a call into expfmt's encoders (those belong to
// promhttp, which serves /metrics; issue 34).
func expositionByHand(t *testing.T, fset *token.FileSet, name string, src []byte) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	expfmtName := ""
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == "github.com/prometheus/common/expfmt" {
			expfmtName = "expfmt"
			if im.Name != nil {
				expfmtName = im.Name.Name
			}
		}
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				break
			}
			s, err := strconv.Unquote(n.Value)
			if err != nil {
				break
			}
			for _, l := range strings.Split(s, "\n") {
				if strings.HasPrefix(l, "# HELP") || strings.HasPrefix(l, "# TYPE") || strings.Contains(l, "version=0.0.4") {
					found = append(found, fset.Position(n.Pos()).String()+": "+n.Value)
					break
				}
			}
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && expfmtName != "" && x.Name == expfmtName {
				switch n.Sel.Name {
				case "MetricFamilyToText", "MetricFamilyToOpenMetrics", "NewEncoder":
					found = append(found, fset.Position(n.Pos()).String()+": "+x.Name+"."+n.Sel.Name)
				}
			}
		}
		return true
	})
	return found
}

// No production file of the module writes the exposition format by hand:
// /metrics is client_golang's (promhttp). Every non-test Go file is read,
// test kits and bench programs included.
func TestNoExpositionWrittenByHand(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not at %s: %v", root, err)
	}
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, f := range expositionByHand(t, fset, path, src) {
			t.Errorf("exposition written by hand (serve it through promhttp): %s", f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d Go files read under %s", files, root)
	}
}

// The check finds the hand-written writer and negotiation that /metrics had
// before issue 34 (kept in testdata as they were).
func TestExpositionRuleCatchesTheOldWriter(t *testing.T) {
	fset := token.NewFileSet()
	for file, want := range map[string][]string{
		"metrics.go.txt": {`"# HELP "`, `"\n# TYPE "`, "expfmt.MetricFamilyToText"},
		"handler.go.txt": {`"text/plain; version=0.0.4; charset=utf-8"`},
	} {
		src, err := os.ReadFile(filepath.Join("testdata", "exposition_rule", file))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(expositionByHand(t, fset, file, src), "\n")
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %s not found; found:\n%s", file, w, got)
			}
		}
	}
	// Beside it, a file that only serves through promhttp passes.
	clean := []byte("package x\n\nimport \"github.com/prometheus/client_golang/prometheus/promhttp\"\n\nvar h = promhttp.HandlerFor(nil, promhttp.HandlerOpts{})\n\n// # HELP in a comment is no exposition.\nvar s = \"linecheck_hops\"\n")
	if got := expositionByHand(t, fset, "clean.go", clean); len(got) != 0 {
		t.Errorf("clean file flagged: %v", got)
	}
}
