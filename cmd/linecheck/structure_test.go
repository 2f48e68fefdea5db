package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// optionStateFindings scans the non-test Go files of dir for package-level
// command state: a variable of an options type (…Options, …Opts, …Flags,
// or an anonymous struct), a variable holding a *cobra.Command, and any
// package-level variable bound to a flag (&v or &v.field handed to a
// …Var/…VarP call). Commands keep their options in a struct made by their
// constructor (newXxxCmd), so that every run starts from the defaults.
func optionStateFindings(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var parsed []*ast.File
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, p, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
	}
	var found []string
	pos := func(n ast.Node) string { return fset.Position(n.Pos()).String() }
	optionType := func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.StructType:
			return true
		case *ast.Ident:
			n := e.Name
			return strings.HasSuffix(n, "Options") || strings.HasSuffix(n, "Opts") || strings.HasSuffix(n, "Flags")
		case *ast.StarExpr:
			if sel, ok := e.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Command" {
				return true
			}
		}
		return false
	}
	globals := map[string]bool{}
	for _, f := range parsed {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, name := range vs.Names {
					globals[name.Name] = true
					typ := vs.Type
					if typ == nil && i < len(vs.Values) {
						switch v := vs.Values[i].(type) {
						case *ast.CompositeLit:
							typ = v.Type
						case *ast.UnaryExpr:
							if cl, ok := v.X.(*ast.CompositeLit); ok && v.Op == token.AND {
								if sel, ok := cl.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Command" {
									found = append(found, pos(name)+": package-level command "+name.Name)
								}
							}
						}
					}
					if typ != nil && optionType(typ) {
						found = append(found, pos(name)+": package-level options "+name.Name)
					}
				}
			}
		}
	}
	root := func(e ast.Expr) string {
		for {
			switch x := e.(type) {
			case *ast.Ident:
				return x.Name
			case *ast.SelectorExpr:
				e = x.X
			default:
				return ""
			}
		}
	}
	for _, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var fn string
			switch x := call.Fun.(type) {
			case *ast.Ident:
				fn = x.Name
			case *ast.SelectorExpr:
				fn = x.Sel.Name
			}
			if !strings.HasSuffix(fn, "Var") && !strings.HasSuffix(fn, "VarP") {
				return true
			}
			for _, a := range call.Args {
				if u, ok := a.(*ast.UnaryExpr); ok && u.Op == token.AND {
					if r := root(u.X); globals[r] && !isShadowed(f, call, r) {
						found = append(found, pos(a)+": flag bound to package-level "+r)
					}
				}
			}
			return true
		})
	}
	return found
}

// isShadowed reports whether name is declared inside the function holding
// at: then &name is a local, not the package-level variable.
func isShadowed(f *ast.File, at ast.Node, name string) bool {
	shadowed := false
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || at.Pos() < fd.Pos() || at.Pos() > fd.End() {
			continue
		}
		ast.Inspect(fd, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				if x.Tok == token.DEFINE {
					for _, l := range x.Lhs {
						if id, ok := l.(*ast.Ident); ok && id.Name == name {
							shadowed = true
						}
					}
				}
			case *ast.ValueSpec:
				for _, id := range x.Names {
					if id.Name == name {
						shadowed = true
					}
				}
			case *ast.Field:
				for _, id := range x.Names {
					if id.Name == name {
						shadowed = true
					}
				}
			}
			return true
		})
	}
	return shadowed
}

func TestNoPackageLevelOptionVariables(t *testing.T) {
	for _, f := range optionStateFindings(t, ".") {
		t.Errorf("%s: keep a command's options in the struct its newXxxCmd makes", f)
	}
}

// The scan finds the shapes it is meant to find.
func TestOptionStateScanFindsGlobals(t *testing.T) {
	dir := t.TempDir()
	src := `package x

var fooOpts struct{ format string }

var barOptions barOptionsT

var anon = struct{ n int }{}

var cmd = &cobra.Command{Use: "x"}

var plain string

func init() {
	f.StringVar(&plain, "plain", "", "")
	f.StringVar(&fooOpts.format, "format", "", "")
}

func ok() {
	o := &struct{ s string }{}
	f.StringVar(&o.s, "s", "", "")
}
`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := optionStateFindings(t, dir)
	// fooOpts, anon, cmd, and the two bindings (plain, fooOpts.format);
	// barOptions is of a type named …T, not an options name.
	if len(got) != 5 {
		t.Errorf("found %d, want 5:\n%s", len(got), strings.Join(got, "\n"))
	}
}
