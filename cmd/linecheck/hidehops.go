package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

// hideHopsUsage is --hide-hops's help line, alike on trace, compare,
// backtrace and tui.
const hideHopsUsage = "mask the hops at TTL 1 to `N` (as trippy's privacy mode) in every format: their addresses read \"hidden\", " +
	"without reverse DNS name, AS number, AS name, country or carrier, and the AS path leaves them out; the report says so " +
	"(\"hidden_hops\" in JSON); statistics and line class are still from the real hops. 0 = off"

// hideHopsFlag adds --hide-hops to f, into p.
func hideHopsFlag(f *pflag.FlagSet, p *int) { f.IntVar(p, "hide-hops", 0, hideHopsUsage) }

// checkHideHops refuses a negative --hide-hops (exit 2 by the caller).
func checkHideHops(n int) error {
	if n < 0 {
		return fmt.Errorf("--hide-hops %d: the number of hops to mask is 0 (off) or more", n)
	}
	return nil
}
