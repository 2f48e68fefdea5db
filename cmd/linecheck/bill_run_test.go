package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lcRunStdin is lcRun with the child's standard input read from the file at path.
func lcRunStdin(t *testing.T, path string, args ...string) (string, string, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join(args, "\x1f"))
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f, &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.String(), stderr.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}

// Issue 35: `bill -` reads standard input, as users expect of a LOG
// argument (it said "open -: no such file or directory"): the same report
// as the file gives, named stdin; "-" twice is refused.
func TestBillDashReadsStandardInput(t *testing.T) {
	file, errs, code := billRun(t, sampleCSV, "--offers", sampleOffers, "--format", "json")
	if code != 0 {
		t.Fatalf("bill FILE: exit %d: %s", code, errs)
	}
	in, errs, code := lcRunStdin(t, sampleCSV, "bill", "-", "--offers", sampleOffers, "--format", "json")
	if code != 0 {
		t.Fatalf("bill - < FILE: exit %d: %s", code, errs)
	}
	// The reports differ only in the input's name.
	names := regexp.MustCompile(`"(name|source)": "[^"]*"`)
	if a, b := names.ReplaceAllString(file, ""), names.ReplaceAllString(in, ""); a != b {
		t.Errorf("bill - differs from bill FILE beyond the names:\n%s\n---\n%s", b, a)
	}
	if !strings.Contains(in, `"source": "stdin"`) {
		t.Errorf("standard input is not named stdin:\n%.400s", in)
	}
	_, errs, code = lcRunStdin(t, sampleCSV, "bill", "-", "-")
	if code != 2 || !strings.Contains(errs, "- (standard input) is given twice") {
		t.Errorf("bill - -: exit %d, %q", code, errs)
	}
}

// Issue 35: Ctrl-C while bill reads a large log ended it silently (killed by
// the signal, no message). It now says what it was doing, writes nothing
// (no report, no --plot file) and exits 130. The log is a FIFO the test
// holds open, so the run is surely inside the read when SIGINT comes.
func TestBillInterruptedWhileReadingSaysSoAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "big.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	plot := filepath.Join(dir, "month.svg")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"bill", fifo, "--offers", sampleOffers, "--plot", plot}, "\x1f"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	// Opening the FIFO to write returns once bill has opened it to read.
	opened := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
		}
		opened <- w
	}()
	var w *os.File
	select {
	case w = <-opened:
	case <-time.After(60 * time.Second):
		t.Fatal("bill never opened its log")
	}
	defer w.Close()
	if _, err := w.WriteString("timestamp,in_bytes,out_bytes\n1790812800,1000,2000\n"); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	want := "linecheck: bill interrupted while reading " + fifo + ": nothing written\n"
	if code != 130 || stderr.String() != want {
		t.Errorf("exit %d, stderr %q; want 130 and %q", code, stderr.String(), want)
	}
	if stdout.Len() != 0 {
		t.Errorf("wrote a report after Ctrl-C:\n%s", stdout.String())
	}
	if _, err := os.Stat(plot); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--plot file after Ctrl-C: %v", err)
	}
}
