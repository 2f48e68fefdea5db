package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// helpFlags reads the long flag names a command's --help lists (its own
// and the inherited ones): the expectation each man page is held to.
func helpFlags(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errOut := runLinecheckOut(t, append(args, "--help")...)
	if code != 0 {
		t.Fatalf("%v --help: exit %d: %s", args, code, errOut)
	}
	var names []string
	re := regexp.MustCompile(`^\s+(?:-\S, )?--([a-z0-9][a-z0-9.-]*)`)
	for _, l := range strings.Split(out, "\n") {
		if m := re.FindStringSubmatch(l); m != nil && m[1] != "help" {
			names = append(names, m[1])
		}
	}
	return names
}

func TestReleaseFilesManPagesCoverEveryCommandAndFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	man, comp := filepath.Join(dir, "man"), filepath.Join(dir, "comp")
	if code, _, errOut := runLinecheckOut(t, "__release-files", "--man", man, "--completions", comp, "--date", "2026-12-01"); code != 0 {
		t.Fatalf("__release-files: exit %d: %s", code, errOut)
	}
	// The commands a user can call, from the root's own --help.
	_, rootHelp, _ := runLinecheckOut(t, "--help")
	var cmds [][]string
	on := false
	for _, l := range strings.Split(rootHelp, "\n") {
		switch {
		case strings.HasPrefix(l, "Available Commands:"):
			on = true
		case on && strings.TrimSpace(l) == "":
			on = false
		case on:
			name := strings.Fields(l)[0]
			if name != "help" && name != "completion" {
				cmds = append(cmds, []string{name})
			}
		}
	}
	cmds = append(cmds, []string{"asn", "update"}, []string{"vantage", "fetch"})
	if len(cmds) < 12 {
		t.Fatalf("found %d commands in --help: %v", len(cmds), cmds)
	}
	for _, c := range cmds {
		page := filepath.Join(man, "linecheck-"+strings.Join(c, "-")+".1")
		b, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("linecheck %s: no man page: %v", strings.Join(c, " "), err)
			continue
		}
		text := string(b)
		if !strings.HasPrefix(text, ".TH LINECHECK-"+strings.ToUpper(strings.Join(c, "-"))+" 1 \"2026-12-01\"") {
			t.Errorf("%s: header %q", page, strings.SplitN(text, "\n", 2)[0])
		}
		for _, f := range helpFlags(t, c...) {
			if !strings.Contains(text, `\fB\-\-`+strings.ReplaceAll(f, "-", `\-`)+`\fR`) {
				t.Errorf("%s: --%s of '%s --help' is missing", page, f, strings.Join(c, " "))
			}
		}
	}
	if _, err := os.Stat(filepath.Join(man, "linecheck.1")); err != nil {
		t.Error("no linecheck.1")
	}
	if _, err := os.Stat(filepath.Join(man, "linecheck-__release-files.1")); err == nil {
		t.Error("the hidden packaging command has a page")
	}
	for _, f := range []string{"linecheck.bash", "_linecheck", "linecheck.fish"} {
		if b, err := os.ReadFile(filepath.Join(comp, f)); err != nil || !strings.Contains(string(b), "linecheck") {
			t.Errorf("completion %s: %v", f, err)
		}
	}
	// groff, where installed, renders each page without a warning.
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Log("groff not installed: pages not rendered")
		return
	}
	pages, _ := filepath.Glob(filepath.Join(man, "*.1"))
	for _, p := range pages {
		out, err := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", p).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("groff %s: %v %s", filepath.Base(p), err, out)
		}
	}
}

func TestManPageEscapesRoff(t *testing.T) {
	for in, want := range map[string]string{
		"--count N":       `\-\-count N`,
		`a\b`:             `a\eb`,
		".starts a macro": `\&.starts a macro`,
		"≤ 5 ms …":        `\[u2264] 5 ms \[u2026]`,
		"'quoted":         `\&'quoted`,
	} {
		if got := roffEscape(in); got != want {
			t.Errorf("roffEscape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVersionJSON(t *testing.T) {
	t.Parallel()
	code, out, errOut := runLinecheckOut(t, "version", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		Schema    string  `json:"schema"`
		Version   string  `json:"version"`
		Commit    *string `json:"commit"`
		BuildDate *string `json:"build_date"`
		Go        string  `json:"go"`
		Datasets  []struct {
			Name, Date, Source string
			Used               bool
		} `json:"datasets"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, k := range []string{"schema", "version", "commit", "build_date", "go", "datasets"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("no %q in %s", k, out)
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Schema != "linecheck.version/v1" || !strings.HasPrefix(v.Go, "go1.") || v.Version == "" {
		t.Errorf("version document: %+v", v)
	}
	// A test binary is not stamped: the build date is absent, not made up.
	if v.BuildDate != nil {
		t.Errorf("build_date %q in an unstamped build", *v.BuildDate)
	}
	if len(v.Datasets) == 0 || v.Datasets[0].Name != "asn" || !regexp.MustCompile(`^\d{4}-\d\d-\d\d$`).MatchString(v.Datasets[0].Date) {
		t.Errorf("datasets: %+v", v.Datasets)
	}
	if code, _, _ := runLinecheckOut(t, "version", "--format", "xml"); code != 2 {
		t.Errorf("--format xml: exit %d, want 2", code)
	}
}
