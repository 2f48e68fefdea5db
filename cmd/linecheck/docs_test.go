package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

// docExample is a "$ linecheck …" line of a fenced block and the line shown
// after it.
type docExample struct {
	file  string
	line  int
	args  []string
	first string
}

// offlineExamples returns the examples of file that need no network, no
// privilege and nothing outside the repository: replays, offline compares,
// bills over bundled logs, the demo. Commands with pipes, redirections or
// shell lists are left out (the shell is not part of the example).
func offlineExamples(t *testing.T, file string) []docExample {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", file))
	if err != nil {
		t.Fatal(err)
	}
	var out []docExample
	sc := bufio.NewScanner(bytes.NewReader(b))
	in, n := false, 0
	var pending *docExample
	for sc.Scan() {
		n++
		l := sc.Text()
		if strings.HasPrefix(l, "```") {
			in, pending = !in, nil
			continue
		}
		if !in {
			continue
		}
		if pending != nil {
			pending.first = l
			out = append(out, *pending)
			pending = nil
			continue
		}
		cmd, ok := strings.CutPrefix(l, "$ linecheck ")
		if !ok || strings.ContainsAny(cmd, "|;<>&`$") || strings.Contains(cmd, "#") {
			continue
		}
		offline := strings.HasPrefix(cmd, "demo") || strings.Contains(cmd, "--replay ") || strings.Contains(cmd, "--offline") ||
			(strings.HasPrefix(cmd, "bill ") && !strings.Contains(cmd, "--prometheus") && !strings.Contains(cmd, "/tmp/"))
		if !offline {
			continue
		}
		pending = &docExample{file: file, line: n, args: strings.Fields(cmd)}
	}
	return out
}

// Every offline example of the README and of the probing and route docs
// runs as shown, and its first output line is the one the document shows.
func TestDocExamplesRunAsShown(t *testing.T) {
	bin := testbin.Linecheck(t)
	total := 0
	for _, f := range []string{"README.md", "docs/probe.md", "docs/route.md", "docs/netlab.md"} {
		for _, ex := range offlineExamples(t, f) {
			total++
			cmd := exec.Command(bin, ex.args...)
			cmd.Dir = "../.."
			cmd.Env = append(os.Environ(), "NO_COLOR=1")
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			_ = cmd.Run() // a verdict may exit 1; the output is what counts
			got, _, _ := strings.Cut(stdout.String(), "\n")
			if got != ex.first {
				t.Errorf("%s:%d: linecheck %s\nfirst line %q\ndocument   %q", ex.file, ex.line, strings.Join(ex.args, " "), got, ex.first)
			}
		}
	}
	if total < 4 {
		t.Errorf("only %d offline examples found: the parser no longer sees them", total)
	}
}
