package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/billing/ingest"
)

// billProgress is the state of one run of bill: what it is doing, for the message Ctrl-C
// prints, and a gate that lets its output (the report, --plot files) be
// written whole or not at all.
type billProgress struct {
	mu      sync.Mutex
	doing   string
	stopped bool // interrupted: write nothing
	writing bool // the output has begun: let it end
}

// step says what the run is doing now ("reading port.log (4.2 GB)").
func (r *billProgress) step(format string, args ...any) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.doing = fmt.Sprintf(format, args...)
	r.mu.Unlock()
}

// output runs write unless the run was interrupted; an interruption that
// comes once it has begun waits for it to end.
func (r *billProgress) output(write func() error) error {
	if r != nil {
		r.mu.Lock()
		if r.stopped {
			r.mu.Unlock()
			return errInterrupted
		}
		r.writing = true
		r.mu.Unlock()
	}
	return write()
}

// interrupt stops the run before its output: it returns what the run was
// doing, and whether its output had already begun (then it goes on).
func (r *billProgress) interrupt() (doing string, writing bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = !r.writing
	return r.doing, r.writing
}

// runBillInterruptible runs bill so that Ctrl-C (or SIGTERM) ends it at
// once with a message saying what it was doing and exit 130, having
// written nothing: reading a large log takes long, and the run used to die
// silently (issue 35). Once the output has begun it is let to end.
func runBillInterruptible(c *cobra.Command, args []string, o *billOptions) error {
	run := &billProgress{doing: "starting"}
	o.run = run
	ctx, interrupted, stop := interruptContext(c.Context())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- runBill(c, args, o) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	if !interrupted() {
		return <-done
	}
	doing, writing := run.interrupt()
	if writing {
		return <-done
	}
	return &exitError{code: 130, err: fmt.Errorf("bill interrupted while %s: nothing written", doing)}
}

// logNames names the LOG arguments for the run's message, with their sizes.
func logNames(args []string) string {
	const most = 3
	names := make([]string, 0, most)
	for i, a := range args {
		if i == most {
			names = append(names, fmt.Sprintf("and %d more", len(args)-most))
			break
		}
		switch st, err := os.Stat(a); {
		case a == "-":
			names = append(names, "standard input")
		case err == nil && st.Mode().IsRegular():
			names = append(names, fmt.Sprintf("%s (%s)", a, byteSize(st.Size())))
		default:
			names = append(names, a)
		}
	}
	return strings.Join(names, ", ")
}

// byteSize renders a file size in decimal units, as the volumes are.
func byteSize(n int64) string {
	const units = "kMGTPE"
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/1000, 0
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	return fmt.Sprintf("%.1f %cB", v, units[i])
}

// stdinName is standard input's name in messages and its series' name.
const stdinName = "stdin"

// readBillLogs reads the LOG files, several (a PoP's port files) in
// parallel, in order; "-" is standard input (in), read once. None at all
// is bad usage.
func readBillLogs(in io.Reader, args []string, ro ingest.ReadOptions) ([]*billing.Series, error) {
	if len(args) == 0 {
		return nil, badInput(errors.New("no LOG given: name one or more traffic logs (MRTG, vnstat JSON, rrdtool xport, Prometheus JSON, CSV), or - for standard input"))
	}
	dash := slices.Index(args, "-")
	if dash < 0 {
		series, err := ingest.ReadFiles(args, ro)
		if err != nil {
			return nil, badInput(err)
		}
		return series, nil
	}
	if slices.Contains(args[dash+1:], "-") {
		return nil, badInput(errors.New("- (standard input) is given twice: it can be read once"))
	}
	var all []*billing.Series
	for _, part := range [][]string{args[:dash], {"-"}, args[dash+1:]} {
		var series []*billing.Series
		var err error
		switch {
		case len(part) == 0:
			continue
		case part[0] == "-":
			series, err = ingest.Read(in, stdinName, ro)
		default:
			series, err = ingest.ReadFiles(part, ro)
		}
		if err != nil {
			return nil, badInput(err)
		}
		all = append(all, series...)
	}
	return all, nil
}
