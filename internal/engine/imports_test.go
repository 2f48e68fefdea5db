package engine

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// probePath is package probe's import path; its sub-packages (probe/bw)
// are under it.
const probePath = "github.com/linecheck/linecheck/probe"

// importsProbe tells whether path is package probe or one under it.
func importsProbe(path string) bool {
	return path == probePath || strings.HasPrefix(path, probePath+"/")
}

// The surfaces subscribe to the engine: the TUI and serve's exporter import
// no probe package (neither probe nor probe/bw), in their production files;
// what they need of probe's types the engine names (types.go). Issue 34.
func TestSurfacesImportNoProbePackage(t *testing.T) {
	for _, dir := range []string{"../../tui", "../exporter"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		scanned := 0
		fset := token.NewFileSet()
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			scanned++
			for _, im := range af.Imports {
				p, err := strconv.Unquote(im.Path.Value)
				if err != nil {
					t.Fatal(err)
				}
				if importsProbe(p) {
					t.Errorf("%s imports %s: a surface takes what it needs of probe from internal/engine", f, p)
				}
			}
		}
		if scanned == 0 {
			t.Fatalf("no Go file found in %s: the scan would pass on nothing", dir)
		}
	}
}

// importsProbe knows the probe packages from their neighbours: the scan
// above can fail.
func TestImportsProbeTellsProbePackagesApart(t *testing.T) {
	for path, want := range map[string]bool{
		probePath:                                        true,
		probePath + "/bw":                                true,
		"github.com/linecheck/linecheck/probex":          false,
		"github.com/linecheck/linecheck/billing":         false,
		"github.com/linecheck/linecheck/internal/engine": false,
	} {
		if got := importsProbe(path); got != want {
			t.Errorf("importsProbe(%q) = %v, want %v", path, got, want)
		}
	}
}
