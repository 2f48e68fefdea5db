package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/linecheck/linecheck/internal/gpu"
	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/report"
)

const gpuWatchHelp = `

Under load (--watch, --report):
  --watch samples every card every --every (default 5s) with
  nvidia-smi --query-gpu=` + gpu.WatchQuery + ` --format=csv
  while the buyer's own baseline runs, and the Xid errors the driver writes to
  the kernel log (read from /dev/kmsg when readable: root or CAP_SYSLOG). Each
  sample is one line of --journal FILE (linecheck.journal/v1, kind gpu), synced
  before the next, resumed when the file exists, a torn last line dropped and
  reported: the same journal ping --watch and bw --watch keep. When the watch
  stops (Ctrl-C, --watch-cycles) the report is printed.

  --report --journal FILE (or --query-log FILE, a log of the query above with
  -l N that a provider sent) prints per card: the maximum and mean temperature,
  the share of samples throttled and by which reason (SW power cap, HW slowdown,
  SW/HW thermal slowdown, HW power brake), the draw against the power cap, SM
  clocks, utilisation, ECC errors that appeared; --plot FILE.svg draws the
  temperature curve of every card. A contract's gpu: block may hold the SLA
  keys max_temp_c and max_throttle_share (0.05 = throttled at most 5% of the
  time on every card): exit 1 when one fails.`

// gpuClockKey holds the watch's clock; tests replace it through the context.
type gpuClockKey struct{}

func gpuClock(ctx context.Context) func() time.Time {
	if f, ok := ctx.Value(gpuClockKey{}).(func() time.Time); ok {
		return f
	}
	return time.Now
}

// sampleGPUs runs the watch query once; old drivers that refuse the
// clocks_event_reasons field are asked again with the older name.
func sampleGPUs(ctx context.Context, prog string) ([]gpu.Sample, error) {
	b, err := runNVIDIASMI(ctx, prog, "--query-gpu="+gpu.WatchQuery, "--format=csv")
	if err != nil && strings.Contains(err.Error(), "is not a valid field") {
		b, err = runNVIDIASMI(ctx, prog, "--query-gpu="+gpu.WatchQueryOld, "--format=csv")
	}
	if err != nil {
		return nil, err
	}
	return gpu.ParseSamples(b, prog+" --query-gpu", time.Local)
}

// kmsg reads new kernel log records for Xid errors. It reads the raw
// descriptor: an *os.File of a non-blocking /dev/kmsg would park in Go's
// poller instead of answering EAGAIN when nothing is new.
type kmsg struct{ fd int }

func openKmsg() (*kmsg, error) {
	fd, err := unix.Open("/dev/kmsg", unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	// only what is logged from now on: old Xids are not this watch's
	if _, err := unix.Seek(fd, 0, io.SeekEnd); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &kmsg{fd}, nil
}

func (k *kmsg) close() { unix.Close(k.fd) }

// xids returns the Xid records logged since the last call.
func (k *kmsg) xids(now time.Time) []gpu.Xid {
	var out []gpu.Xid
	buf := make([]byte, 8192)
	for i := 0; i < 10000; i++ {
		n, err := unix.Read(k.fd, buf)
		if err == unix.EPIPE || err == unix.EINTR {
			continue // records overwritten before we read them
		}
		if err != nil || n <= 0 {
			break // EAGAIN: nothing more
		}
		rec := string(buf[:n])
		if j := strings.IndexByte(rec, ';'); j >= 0 {
			rec = rec[j+1:]
		}
		rec, _, _ = strings.Cut(rec, "\n")
		if x, ok := gpu.ParseXid(rec, now); ok {
			out = append(out, x)
		}
	}
	return out
}

func gpuWatch(c *cobra.Command, o *gpuOptions, ct *gpu.Contract) error {
	if o.every <= 0 {
		return badInput(fmt.Errorf("--every %s: must be positive", o.every))
	}
	if o.cycles < 0 {
		return badInput(fmt.Errorf("--watch-cycles %d: must not be negative", o.cycles))
	}
	if _, err := exec.LookPath(o.nvidiaSMI); err != nil {
		return badInput(fmt.Errorf("%s not found (%v): --watch samples the GPUs of this machine; a log a provider sent goes to --report --query-log FILE", o.nvidiaSMI, err))
	}
	wo := &watchOpts{journal: o.journal, cycles: o.cycles}
	appendFn, closeFn, _, err := openWatchJournal(c, wo, journal.KindGPU)
	if err != nil {
		return err
	}
	defer closeFn()
	ctx, stop := watchContext(c)
	defer stop()
	now := gpuClock(ctx)
	stderr := c.ErrOrStderr()
	km, kerr := openKmsg()
	if kerr != nil {
		fmt.Fprintf(stderr, "linecheck: Xid errors are not watched: /dev/kmsg: %v (run as root, or with CAP_SYSLOG)\n", kerr)
	} else {
		defer km.close()
	}
	var all []gpu.Sample
	var xids []gpu.Xid
	for n := 1; o.cycles == 0 || n <= o.cycles; n++ {
		start := now()
		samples, err := sampleGPUs(ctx, o.nvidiaSMI)
		if ctx.Err() != nil {
			break
		}
		e := journal.Entry{Time: start, End: now(), GPU: samples}
		if err != nil {
			e.Error = err.Error()
			fmt.Fprintf(stderr, "linecheck: sample %d: %v\n", n, err)
		}
		if km != nil {
			e.Xid = km.xids(now())
			xids = append(xids, e.Xid...)
		}
		if _, err := appendFn(e); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		all = append(all, samples...)
		if o.cycles != 0 && n == o.cycles {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(start.Add(o.every))):
		}
		if ctx.Err() != nil {
			break
		}
	}
	if o.journal == "" {
		return nil // the samples went to stdout as journal lines
	}
	src := o.journal
	entries, _, err := journal.Read(o.journal)
	if err == nil {
		all, xids = journalSamples(entries)
	}
	return gpuWriteReport(c, o, gpu.NewWatchDoc(src, all, xids, ct), ct)
}

func journalSamples(entries []journal.Entry) ([]gpu.Sample, []gpu.Xid) {
	var s []gpu.Sample
	var x []gpu.Xid
	for _, e := range entries {
		s = append(s, e.GPU...)
		x = append(x, e.Xid...)
	}
	return s, x
}

func gpuReport(c *cobra.Command, o *gpuOptions, ct *gpu.Contract) error {
	var samples []gpu.Sample
	var xids []gpu.Xid
	var src string
	switch {
	case o.journal != "" && o.queryLog != "":
		return badInput(errors.New("--report reads --journal FILE or --query-log FILE, not both"))
	case o.journal != "":
		entries, _, err := journal.Read(o.journal)
		if err != nil {
			return badInput(err)
		}
		for i, e := range entries {
			if e.Kind != journal.KindGPU {
				return badInput(fmt.Errorf("%s:%d: a %s journal, not one of gpu --watch", o.journal, i+1, e.Kind))
			}
		}
		samples, xids = journalSamples(entries)
		src = o.journal
	case o.queryLog != "":
		loc, err := zoneFlag("--tz", o.tz)
		if err != nil {
			return badInput(err)
		}
		b, err := os.ReadFile(o.queryLog)
		if err != nil {
			return badInput(err)
		}
		if samples, err = gpu.ParseSamples(b, o.queryLog, loc); err != nil {
			return badInput(err)
		}
		src = o.queryLog
	default:
		return badInput(errors.New("--report needs --journal FILE (of gpu --watch) or --query-log FILE"))
	}
	if len(samples) == 0 {
		return badInput(fmt.Errorf("%s: no GPU sample in it", src))
	}
	return gpuWriteReport(c, o, gpu.NewWatchDoc(src, samples, xids, ct), ct)
}

func gpuWriteReport(c *cobra.Command, o *gpuOptions, d gpu.WatchDoc, ct *gpu.Contract) error {
	out := c.OutOrStdout()
	if err := report.Render(out, report.GPUWatchReport{Doc: d}, report.Format(o.format), tableOptions(out, o.wide)); err != nil {
		return err
	}
	if o.plot != "" {
		var maxT *float64
		if ct != nil {
			maxT = ct.MaxTempC
		}
		f, err := report.NewChartFile(o.plot, report.GPUTempChart(d, maxT))
		if err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		if err := writeChartFiles([]report.ChartFile{f}); err != nil {
			return err
		}
	}
	return gpuVerdict(d.Verdict, d.Checks, "under load the machine does not meet the SLA")
}
