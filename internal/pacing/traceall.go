package pacing

import (
	"context"
	"errors"
	"net/netip"
	"sync"

	"github.com/linecheck/linecheck/probe"
)

// TraceOutcome is one target's trace of TraceAll: the run (nil when the
// socket could not be opened) and the error that ended it, if any.
type TraceOutcome struct {
	Run *probe.TraceRun
	Err error
}

// ErrNotStarted is the outcome of a TraceAll target whose trace had not
// started when the context ended: it has no run, and nothing failed.
var ErrNotStarted = errors.New("interrupted before it was traced")

// openDriver opens a target's trace driver (a test replaces it).
var openDriver = probe.OpenTraceDriver

// TraceAll traces every address in dsts at once, each over its own socket
// driver, with every probe of every trace paced by budget (backtrace's
// three-network sweep). names label the traces (dsts[i] is named
// names[i]). each is called as each trace ends. A trace that cannot be
// run gets its error and the others go on; a privilege error stops the
// whole call, since it would hit every target. A trace cut by the
// context's end keeps what it measured, without an error; one not started
// by then gets ErrNotStarted.
func TraceAll(ctx context.Context, names []string, dsts []netip.Addr, cfg probe.TraceConfig, budget *Budget, each func()) ([]TraceOutcome, error) {
	res := make([]TraceOutcome, len(dsts))
	var wg sync.WaitGroup
	for i, addr := range dsts {
		// Once ctx ended no trace starts: opening thousands of sockets only
		// to close them again held an interrupted 3,000-target backtrace
		// for 6–15 s (issue 35).
		if ctx.Err() != nil {
			res[i].Err = ErrNotStarted
			each()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer each()
			if ctx.Err() != nil {
				res[i].Err = ErrNotStarted
				return
			}
			drv, err := openDriver(cfg, addr)
			if err != nil {
				res[i].Err = err
				return
			}
			defer drv.Close()
			run, err := probe.TraceWithDriver(ctx, &PacedDriver{Driver: drv, Budget: budget, Clock: RealClock{}, Ctx: ctx}, names[i], addr, cfg, nil)
			if errors.Is(err, context.Canceled) && run != nil {
				err = nil
			}
			res[i] = TraceOutcome{Run: run, Err: err}
		}()
	}
	wg.Wait()
	for _, r := range res {
		if errors.Is(r.Err, probe.ErrPrivilege) {
			return nil, r.Err
		}
	}
	return res, nil
}
