package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/linecheck/linecheck/internal/asn"
)

// newASNCmd is `linecheck asn`: the offline IP-to-AS dataset. Its one
// subcommand, update, is the only part of linecheck that goes to the network
// for names.
func newASNCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "asn",
		Short: "The offline IP-to-AS dataset that names every hop (asn update refreshes it)",
		Long: `linecheck names each public hop of trace, backtrace, compare and the TUI with its
AS number, network name and country from an offline dataset: a snapshot is
bundled in the binary (linecheck --version gives its date), and
'linecheck asn update' can put a newer one in your cache directory. Lookups
never go to the network.

` + asn.Attribution + `
(https://github.com/sapics/ip-location-db; https://db-ip.com).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newASNUpdateCmd())
	return c
}

// asnUpdateOptions are the flags of asn update.
type asnUpdateOptions struct {
	timeout time.Duration
}

func newASNUpdateCmd() *cobra.Command {
	var o asnUpdateOptions
	c := &cobra.Command{
		Use:   "update [URL...]",
		Short: "Download a fresh IP-to-AS dataset into the cache (the only command that goes online for names)",
		Long: `asn update downloads the dataset's source files, builds linecheck's table of
them and, once it has checked that every row parsed and that each of its four
lists (AS and country ranges, IPv4 and IPv6) holds at least half as many
ranges as the bundled snapshot's, replaces the copy in the cache directory
($XDG_CACHE_HOME/linecheck, else ~/.cache/linecheck) in one rename. Lookups
use the cached copy when it is newer than the bundled snapshot. A download
that fails, is cut short, holds something else, expands past ` + fmt.Sprint(asn.MaxExpanded>>20) + ` MiB or
` + fmt.Sprint(asn.MaxRows) + ` rows in all, or cannot be written (a full disk) leaves the old copy
as it was and says why.

Without URL it downloads the source's published files:
  ` + asn.DefaultURLs[0] + `
  ` + asn.DefaultURLs[1] + `
  ` + asn.DefaultURLs[2] + `
  ` + asn.DefaultURLs[3] + `
Given URLs replace that list, all four files: CSV (plain or gzip) in the
same format, ip_range_start,ip_range_end,asn,name or
ip_range_start,ip_range_end,country.`,
		RunE: func(c *cobra.Command, args []string) error { return runASNUpdate(c, args, o) },
	}
	c.Flags().DurationVar(&o.timeout, "timeout", 5*time.Minute, "give up when the download has not completed within this time")
	return c
}

func runASNUpdate(c *cobra.Command, urls []string, o asnUpdateOptions) error {
	if o.timeout <= 0 {
		return badInput(errors.New("--timeout must be positive"))
	}
	stderr := c.ErrOrStderr()
	res, err := asn.Update(c.Context(), asn.UpdateOptions{URLs: urls, Timeout: o.timeout,
		Progress: func(msg string) { fmt.Fprintln(stderr, "linecheck asn update:", msg) }})
	if err != nil {
		return fmt.Errorf("asn update: %w; the dataset in use is unchanged", err)
	}
	v4, v6 := res.Table.Ranges()
	out := c.OutOrStdout()
	fmt.Fprintf(out, "wrote %s: snapshot %s, %d IPv4 + %d IPv6 AS ranges, %d networks, %d bytes\n",
		res.Path, res.Table.SnapshotDate(), v4, v6, res.Table.Names(), res.Bytes)
	if res.Used {
		fmt.Fprintln(out, "lookups use it from now on (newer than the bundled snapshot)")
	} else {
		fmt.Fprintln(out, "not newer than the bundled snapshot: lookups keep using the bundled one")
	}
	return nil
}
