package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/linecheck/linecheck/internal/compare"
)

// runDemoTUI opens the terminal UI on the bundled scenario.
// Until the TUI is wired in, it prints the report as off a terminal.
func runDemoTUI(ctx context.Context, c *cobra.Command, f *compare.File) error {
	res, err := compare.Run(ctx, f, compare.Options{Offline: true})
	if err != nil {
		return err
	}
	return compare.WriteReport(c.OutOrStdout(), res, "table")
}
