package tui

import (
	"context"
	"errors"
	"io"

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
