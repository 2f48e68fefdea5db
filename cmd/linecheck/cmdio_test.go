package main

import (
	"context"
	"io"
)

// testIO is where the next in-process run of a test writes (nil: the
// process's stdout and stderr); each run builds its own command tree.
var testIO = &runWriters{}

type runWriters struct{ out, err io.Writer }

func (w *runWriters) SetOut(o io.Writer) { w.out = o }
func (w *runWriters) SetErr(e io.Writer) { w.err = e }

// run runs the CLI in-process with args, writing to w.
func (w *runWriters) run(ctx context.Context, args []string) int {
	return runIO(ctx, args, w.out, w.err)
}
