package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// formatChoosers are the packages that render through Render and must not
// decide anything on an output format's name themselves.
var formatChoosers = []string{"../../cmd/linecheck", "../../tui", "../compare", "../exporter"}

// formatNameUses lists, in the production files of dir, every comparison
// (== or !=) with an output-format name as a string literal, every switch
// case on one, and every conversion of one to Format: the choice of
// format belongs to this package (Render, Format's methods).
func formatNameUses(t *testing.T, dir string) []string {
	t.Helper()
	names := map[string]bool{}
	for _, f := range CompareFormats {
		names[string(f)] = true
	}
	isName := func(e ast.Expr) bool {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return false
		}
		v, err := strconv.Unquote(lit.Value)
		return err == nil && names[v]
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s: no Go files (moved? update formatChoosers)", dir)
	}
	var found []string
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		report := func(n ast.Node, what string) {
			found = append(found, fset.Position(n.Pos()).String()+": "+what)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isName(n.X) || isName(n.Y)) {
					report(n, "compares with a format name")
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					if isName(e) {
						report(e, "switch case on a format name")
					}
				}
			case *ast.CallExpr:
				if len(n.Args) == 1 && isName(n.Args[0]) {
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Format" {
						report(n, "converts a format name to Format")
					}
				}
			}
			return true
		})
	}
	return found
}

func TestNoFormatNameComparedOutsideReport(t *testing.T) {
	for _, dir := range formatChoosers {
		for _, u := range formatNameUses(t, dir) {
			t.Errorf("%s: branch through report.Render or a Format method instead", u)
		}
	}
}

// The scan finds what it is meant to find.
func TestFormatNameScanFindsComparisons(t *testing.T) {
	dir := t.TempDir()
	src := `package x

func f(format string) int {
	if format == "json" {
		return 1
	}
	switch format {
	case "csv", "other":
		return 2
	}
	if "markdown" != format || format == "jsonl" {
		return 3
	}
	_ = report.Format("html")
	return 0
}
`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := formatNameUses(t, dir)
	if len(got) != 4 {
		t.Errorf("found %d uses, want 4 (==, case, !=, conversion):\n%s", len(got), strings.Join(got, "\n"))
	}
}
