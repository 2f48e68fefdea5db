package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/samples"
)

// demoOptions are the flags of the command.
type demoOptions struct {
	format   string
	hideHops int
}

func newDemoCmd() *cobra.Command {
	o := &demoOptions{}
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run the main job on the bundled, illustrative samples (offline)",
		Long: `demo runs linecheck's main job on the bundled samples, offline: four candidate
servers (Hong Kong CN2 GIA, Hong Kong BGP, Tokyo, Los Angeles) with recorded
forward and return traces and probe streams, a month of traffic, and the
providers' offers in CNY and USD. It classifies each line, checks the SLA,
prices the month under each offer and ranks the candidates.

On a terminal it opens the live terminal UI; off a terminal (a pipe, a file,
CI) it prints the compare report at once and exits 0.

The sample data are synthetic and illustrative; their addresses are
documentation ranges and are never probed. demo needs no privileges.

Examples:
  linecheck demo
  linecheck demo | less
  linecheck demo --format markdown > demo.md
  linecheck demo --hide-hops 2`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error { return runDemo(c, args, o) },
	}

	lazyFlags(c, func(f *pflag.FlagSet) {
		f.StringVar(&o.format, "format", "table", "report format off a terminal: "+report.FormatList(report.CompareFormats...))
		hideHopsFlag(f, &o.hideHops)
	})
	return c
}

func runDemo(c *cobra.Command, _ []string, o *demoOptions) error {
	format, err := report.ParseFormat(o.format, report.CompareFormats...)
	if err != nil {
		return badInput(err)
	}
	if err := checkHideHops(o.hideHops); err != nil {
		return badInput(err)
	}
	dir, err := os.MkdirTemp("", "linecheck-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path, err := samples.Extract(dir)
	if err != nil {
		return fmt.Errorf("demo: unpacking the bundled samples: %w", err)
	}
	f, err := candidates.Load(path)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	// Relative paths are already resolved against f.Dir; name the file as the
	// user knows it, not by its temporary copy.
	f.Path = "bundled samples/candidates.yaml (illustrative)"
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	if demoInteractive(format) {
		return runDemoTUI(ctx, c, f, o.hideHops)
	}
	res, err := compare.Run(ctx, f, compare.Options{Offline: true})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	// Off a terminal the demo always prints its report and exits 0: a failed
	// SLA is part of what the demo shows, not an error of the demo.
	res = compare.HideHops(res, o.hideHops)
	// The report names files where a figure comes from (the offers file's
	// usage.hours line): name them as the bundled samples, not by the
	// temporary copy that is gone when the demo ends.
	var buf bytes.Buffer
	if err := report.Render(&buf, report.CompareReport{Result: res}, format, tableOptions(c.OutOrStdout(), false)); err != nil {
		return err
	}
	_, err = c.OutOrStdout().Write(bytes.ReplaceAll(buf.Bytes(), []byte(dir+string(filepath.Separator)), []byte("bundled samples/")))
	return err
}

// demoInteractive reports whether demo should open the TUI: stdin and stdout
// are terminals and the user asked for the table (the default).
func demoInteractive(format report.Format) bool {
	return format.ForTerminal() && term.IsTerminal(os.Stdout.Fd()) && term.IsTerminal(os.Stdin.Fd())
}
