package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/linecheck/linecheck"

// moduleRoot is the directory holding go.mod, three levels above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", dir, err)
	}
	return dir
}

// imports maps each production .go file under dir (tests and testdata left
// out), by its path relative to root with forward slashes, to the paths it
// imports.
func imports(t *testing.T, root, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != dir {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = importPaths(f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no Go files under %s", dir)
	}
	return out
}

func importPaths(f *ast.File) []string {
	var out []string
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		out = append(out, p)
	}
	return out
}

// under tells whether the slash path p is dir or inside it.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// internalOf tells whether the import path p is one of this module's
// internal packages (an "internal" element anywhere after the module path).
func internalOf(p string) bool {
	rest, ok := strings.CutPrefix(p, module+"/")
	return ok && (under(rest, "internal") || strings.Contains(rest, "/internal/") || strings.HasSuffix(rest, "/internal"))
}

// A rule forbids the production files under From (a module-relative
// directory) the imports Forbidden reports on.
type rule struct {
	name      string
	from      string
	exempt    func(file string) bool // files under from the rule does not cover
	forbidden func(imp string) bool
	why       string
}

var rules = []rule{
	{
		// Issue 19: probe/bw imported internal/route for the documentation check.
		name:      "probe imports no package of this module outside probe",
		from:      "probe",
		forbidden: func(p string) bool { return under(p, module) && !under(p, module+"/probe") },
		why:       "probe is the layer every other one builds on",
	},
	{
		// Issue 34: billing imported internal/stats and internal/yamlmsg.
		name:      "billing imports no internal package",
		from:      "billing",
		forbidden: internalOf,
		why:       "billing is public: a program outside this module must be able to use it and what it imports (the percentile is package percentile, strict YAML package yamlmsg)",
	},
	{
		// Issue 34: the test kit sat among the production packages.
		name:      "no production package imports the test kit",
		from:      ".",
		exempt:    testInfrastructure,
		forbidden: func(p string) bool { return under(p, module+"/internal/testkit") },
		why:       "internal/testkit is test infrastructure: only _test.go files, the kit itself and bench/ programs use it",
	},
	{
		// Issue 34: internal/netlab and internal/testbin imported testing
		// from production files, among the production packages.
		name:      "test infrastructure lives in internal/testkit",
		from:      ".",
		exempt:    testInfrastructure,
		forbidden: func(p string) bool { return p == "testing" },
		why:       "a production file that imports testing is a test helper: move it under internal/testkit",
	},
	{
		// Issue 34: the TUI and serve's exporter called probe themselves.
		name:      "the TUI imports no probe package",
		from:      "tui",
		forbidden: func(p string) bool { return under(p, module+"/probe") },
		why:       "a surface subscribes to internal/engine, which names the probe types it reads",
	},
	{
		name:      "serve's exporter imports no probe package",
		from:      "internal/exporter",
		forbidden: func(p string) bool { return under(p, module+"/probe") },
		why:       "a surface subscribes to internal/engine, which names the probe types it reads",
	},
	{
		// Issue 34: the schema, the judgement, the live runtime and the
		// compare run were one package.
		name:      "the candidates schema imports no package above it",
		from:      "internal/candidates",
		forbidden: above("internal/verdict", "internal/engine", "internal/compare", "internal/exporter", "internal/report", "tui"),
		why:       "the schema is the bottom of the runs: the verdict, the engine and every surface read it",
	},
	{
		name:      "the verdict imports no package above it",
		from:      "internal/verdict",
		forbidden: above("internal/engine", "internal/compare", "internal/exporter", "internal/report", "tui"),
		why:       "the verdict judges windows and recordings; it never runs a loop or renders",
	},
	{
		name:      "the engine imports no package above it",
		from:      "internal/engine",
		forbidden: above("internal/compare", "internal/exporter", "internal/report", "tui"),
		why:       "compare's one-shot run, the TUI and serve subscribe to the engine, not the other way",
	},
}

// above forbids the module's packages under dirs.
func above(dirs ...string) func(string) bool {
	return func(p string) bool {
		for _, d := range dirs {
			if under(p, module+"/"+d) {
				return true
			}
		}
		return false
	}
}

// testInfrastructure is what the rules about the test kit leave out: the
// kit itself and the bench/ harnesses (programs run by hand or by bench
// scripts, never linked into linecheck).
func testInfrastructure(file string) bool {
	return under(file, "internal/testkit") || under(file, "bench")
}

// findings applies r to the production files of the tree at root.
func findings(t *testing.T, root string, r rule) []string {
	t.Helper()
	var out []string
	for file, imps := range imports(t, root, filepath.Join(root, filepath.FromSlash(r.from))) {
		if r.exempt != nil && r.exempt(file) {
			continue
		}
		for _, p := range imps {
			if r.forbidden(p) {
				out = append(out, file+" imports "+p)
			}
		}
	}
	return out
}

func TestImportRules(t *testing.T) {
	root := moduleRoot(t)
	if n := len(imports(t, root, root)); n < 200 {
		t.Fatalf("only %d production files under %s: the walk missed the tree", n, root)
	}
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			for _, f := range findings(t, root, r) {
				t.Errorf("%s: %s", f, r.why)
			}
		})
	}
}

// Each rule finds what it is meant to find, and its exemptions hold, on a
// small tree written here.
func TestImportRulesFindViolations(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"probe/p.go":                   `import ("net"; "` + module + `/probe/bw"; "` + module + `/internal/route")`,
		"billing/b.go":                 `import ("` + module + `/percentile"; "` + module + `/internal/stats")`,
		"billing/ingest/i.go":          `import "` + module + `/yamlmsg/internal/x"`,
		"billing/b_test.go":            `import "` + module + `/internal/testkit/testbin"`,
		"tui/t.go":                     `import "` + module + `/internal/testkit/netlab"`,
		"internal/netlab/n.go":         `import "testing"`,
		"internal/testkit/kit/k.go":    `import ("testing"; "` + module + `/internal/testkit/netlab")`,
		"bench/x/main.go":              `import ("testing"; "` + module + `/internal/testkit/netlab")`,
		"internal/x/testdata/skip.go":  `import "testing"`,
		"internal/stats/stats_test.go": `import "testing"`,
		"tui/probe.go":                 `import ("` + module + `/probe/bw"; "` + module + `/internal/engine")`,
		"internal/exporter/e.go":       `import "` + module + `/probe"`,
		"internal/exporter/e_test.go":  `import "` + module + `/probe"`,
		"internal/candidates/c.go":     `import ("` + module + `/probe"; "` + module + `/internal/verdict")`,
		"internal/verdict/v.go":        `import ("` + module + `/internal/candidates"; "` + module + `/internal/compare")`,
		"internal/engine/e.go":         `import ("` + module + `/internal/verdict"; "` + module + `/tui")`,
	}
	for name, imp := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n\n"+imp+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{
		"probe imports no package of this module outside probe": {"probe/p.go imports " + module + "/internal/route"},
		"billing imports no internal package": {
			"billing/b.go imports " + module + "/internal/stats",
			"billing/ingest/i.go imports " + module + "/yamlmsg/internal/x",
		},
		"no production package imports the test kit":        {"tui/t.go imports " + module + "/internal/testkit/netlab"},
		"test infrastructure lives in internal/testkit":     {"internal/netlab/n.go imports testing"},
		"the TUI imports no probe package":                  {"tui/probe.go imports " + module + "/probe/bw"},
		"serve's exporter imports no probe package":         {"internal/exporter/e.go imports " + module + "/probe"},
		"the candidates schema imports no package above it": {"internal/candidates/c.go imports " + module + "/internal/verdict"},
		"the verdict imports no package above it":           {"internal/verdict/v.go imports " + module + "/internal/compare"},
		"the engine imports no package above it":            {"internal/engine/e.go imports " + module + "/tui"},
	}
	for _, r := range rules {
		got := findings(t, root, r)
		w := want[r.name]
		if strings.Join(sorted(got), "\n") != strings.Join(sorted(w), "\n") {
			t.Errorf("%s:\n got %q\nwant %q", r.name, sorted(got), sorted(w))
		}
	}
}

func sorted(s []string) []string {
	return slices.Sorted(slices.Values(s))
}
