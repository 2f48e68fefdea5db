package tui

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime/debug"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// RunOptions are Options plus the terminal to run on.
type RunOptions struct {
	Options
	// Input and Output default to the process's terminal.
	Input  io.Reader
	Output io.Writer
}

// Run shows the UI fed by src until the user quits (q, ctrl+c) or ctx ends,
// then restores the terminal. It returns nil on a normal quit.
//
// A caller such as `linecheck demo` builds a *Feed (replayed recordings,
// optional live Feeders, a CostFunc) and calls
//
//	err := tui.Run(ctx, feed, tui.RunOptions{})
func Run(ctx context.Context, src Source, opts RunOptions) error {
	defer TuneGC()()
	m := New(ctx, src, opts.Options)
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if opts.NoColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	_, err := tea.NewProgram(m, popts...).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// liveGCPercent is the garbage collector's target while the TUI runs (Go's
// default is 100). The live heap is small (under a megabyte of statistics
// and memoised rows), so with the default a collection comes every ~4 MB of
// allocation, a few times a second, and a frame that meets one pays its mark
// assist: bench/tui measured the slowest of 1,000 live frames under 2 ms on 1
// of 15 screens at 100 and on 10 of 15 at 800. The price is a heap that may
// grow to ~32 MB of garbage before it is collected.
const liveGCPercent = 800

// TuneGC sets the collector's target for the interactive loop, unless the
// user set GOGC, and returns what puts the previous setting back. Run calls
// it; the live frame benchmark calls it too, so it times what users run.
func TuneGC() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	prev := debug.SetGCPercent(liveGCPercent)
	return func() { debug.SetGCPercent(prev) }
}
