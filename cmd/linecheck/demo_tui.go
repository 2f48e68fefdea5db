package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/linecheck/linecheck/internal/candidates"
)

// runDemoTUI opens the terminal UI on the bundled scenario: the recordings
// replayed (looping, so the screen stays alive) plus one live row that
// measures TCP connect time to a listener the demo opens on 127.0.0.1 (and
// ICMP to 127.0.0.1 where the system permits it).
func runDemoTUI(ctx context.Context, _ *cobra.Command, f *candidates.File, hideHops int) error {
	return openTUI(ctx, f, tuiFlags{offline: true, speed: 300, loopback: true, interval: time.Second, hideHops: hideHops})
}
