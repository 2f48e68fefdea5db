package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 34: the TUI renders the verdict's evaluation (verdict.EvaluateLive)
// and never assembles a route quality or a verdict itself. A use of the
// core's assembly functions in a non-test file of package tui fails.
func TestTUICallsNoneOfTheCoresAssemblyFunctions(t *testing.T) {
	assembly := map[string]bool{"AddTargets": true, "SetFloor": true, "CheckSLA": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	scanned := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		scanned++
		ast.Inspect(af, func(n ast.Node) bool {
			var name string
			switch x := n.(type) {
			case *ast.SelectorExpr:
				name = x.Sel.Name
			case *ast.Ident:
				name = x.Name
			}
			if assembly[name] {
				t.Errorf("%s: uses %s: the TUI renders verdict.EvaluateLive's evaluation and assembles none itself", fset.Position(n.Pos()), name)
				return false
			}
			return true
		})
	}
	if scanned < 10 {
		t.Fatalf("scanned %d files: not the tui package's directory?", scanned)
	}
}
