package labtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The lab tests of these packages run at the same time (go test runs
// packages in parallel and the tests in each call t.Parallel): two labs
// with one namespace prefix take each other's namespaces ("open
// /run/netns/lcltmc: file exists", as two tests here once did). Every
// prefix a lab is brought up with is written once.
func TestLabPrefixesAreUnique(t *testing.T) {
	lit := regexp.MustCompile(`(?:Prefix: *|lab\(t, *)"(lc[a-z0-9]+)"`)
	seen := map[string]string{}
	for _, dir := range []string{".", "..", "../../../../cmd/linecheck"} {
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		// A directory that moved (issue 34: the kit went one level down)
		// would otherwise be left out without a word.
		if len(files) == 0 {
			t.Fatalf("no _test.go files in %s", dir)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				// Configurations that are only checked, never brought up,
				// may share one.
				if strings.Contains(line, "Config{Prefix: \"lcnl\"") {
					continue
				}
				for _, m := range lit.FindAllStringSubmatch(line, -1) {
					at := filepath.Base(f) + ":" + strconv.Itoa(i+1)
					if prev, ok := seen[m[1]]; ok {
						t.Errorf("lab prefix %q at %s is used at %s too", m[1], at, prev)
					}
					seen[m[1]] = at
				}
			}
		}
	}
	if len(seen) < 20 {
		t.Errorf("found %d lab prefixes; the pattern no longer matches how the tests name their labs", len(seen))
	}
}
