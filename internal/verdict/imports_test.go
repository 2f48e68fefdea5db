package verdict

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Issue 34: the verdict judges what compare measures and never reaches back
// up into it; the candidates schema judges nothing. A non-test file of
// internal/verdict importing internal/compare, or of internal/candidates
// importing internal/verdict or internal/compare, fails.
func TestVerdictAndCandidatesImportNoPackageAbove(t *testing.T) {
	const mod = "github.com/linecheck/linecheck/internal/"
	for dir, banned := range map[string][]string{
		".":             {mod + "compare"},
		"../candidates": {mod + "compare", mod + "verdict"},
	} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range af.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				for _, b := range banned {
					if p == b {
						t.Errorf("%s imports %s", f, p)
					}
				}
			}
		}
	}
}
