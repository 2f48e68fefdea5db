package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// notYetMoved are the tui types that still share a name with a core type,
// each with why it is still here; the list only shrinks (a name that is no
// longer declared in tui fails the test until it is taken off).
var notYetMoved = map[string]string{
	"Candidate":  "the overview's row (view state: sparkline memo, ranking cache), not compare.Candidate's file entry",
	"Options":    "the UI's options (size, colour, sort), not compare.Options",
	"SchemeCost": "the cost screen's scheme row (bandwidth charge, offered, carry text), built from billing's bills",
	"CostItem":   "the cost screen's item row (name, detail, amount), built from billing.Item",
}

// declaredTypes lists the exported type names declared by the non-test Go
// files of dir.
func declaredTypes(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				if ts := s.(*ast.TypeSpec); ts.Name.IsExported() {
					out[ts.Name.Name] = true
				}
			}
		}
	}
	return out
}

// Issue 19: the TUI renders the core's types and declares no copies of
// them (Money, Check, SLAResult went: billing.Money, compare.Verdict). A
// tui type named as a type of compare, billing, route or stats fails,
// unless it is on notYetMoved with its reason.
func TestTUIDeclaresNoCopiesOfTheCoresTypes(t *testing.T) {
	core := map[string]string{}
	for _, dir := range []string{"../internal/compare", "../internal/verdict", "../internal/candidates", "../billing", "../internal/route", "../internal/stats"} {
		if _, err := os.Stat(dir); err != nil {
			continue // a package not (or no longer) in the tree
		}
		for name := range declaredTypes(t, dir) {
			core[name] += " " + filepath.Base(dir)
		}
	}
	mine := declaredTypes(t, ".")
	var names []string
	for n := range mine {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if pkgs, ok := core[n]; ok {
			if _, allowed := notYetMoved[n]; !allowed {
				t.Errorf("tui declares %s, a type of%s: render the core's type instead of a copy", n, pkgs)
			}
		}
	}
	for n := range notYetMoved {
		if !mine[n] || core[n] == "" {
			t.Errorf("notYetMoved lists %s, which no longer collides: take it off the list", n)
		}
	}
	for _, gone := range []string{"Money", "Check", "SLAResult", "Hop", "Traffic"} {
		if mine[gone] {
			t.Errorf("tui declares %s again", gone)
		}
	}
}
