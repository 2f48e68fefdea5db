package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/linecheck/linecheck/internal/vantagefetch"
)

// newVantageCmd is `linecheck vantage`: measurements other networks ran
// toward a candidate, from vantages the buyer does not own.
func newVantageCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "vantage",
		Short: "Measurements from vantages you do not own (vantage fetch downloads RIPE Atlas or Globalping results)",
		Long: `RIPE Atlas and Globalping run probes in thousands of networks and publish
their results. trace --replay, compare's recorded.forward (traceroutes) and
recorded.probes (pings) read those files as they are, each probe a vantage
with its network, city and carrier (docs/vantages.md).

'linecheck vantage fetch' downloads a public measurement's results into such a
file. Nothing else in linecheck contacts these platforms.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newVantageFetchCmd())
	return c
}

// vantageFetchOptions are the flags of vantage fetch.
type vantageFetchOptions struct {
	out      string
	baseURL  string
	timeout  time.Duration
	maxBytes int64
}

func newVantageFetchCmd() *cobra.Command {
	var o vantageFetchOptions
	c := &cobra.Command{
		Use:   "fetch atlas|globalping ID",
		Short: "Download a public RIPE Atlas or Globalping measurement's results into a file",
		Long: `vantage fetch downloads the results of one public measurement through the
platform's documented API and writes them, unchanged, to -o FILE:

  atlas MSM_ID      GET https://atlas.ripe.net/api/v2/measurements/MSM_ID/results/?format=json
  globalping ID     GET https://api.globalping.io/v1/measurements/ID

The file is written only when the whole answer came within --timeout, is at
most --max-size, followed at most ` + fmt.Sprint(vantagefetch.DefaultMaxRedirects) + ` redirects, and reads as a result linecheck
takes (a traceroute or mtr for trace --replay and recorded.forward, a ping for
recorded.probes; a Globalping measurement still in progress is refused); it
replaces FILE in one rename, so a failure leaves no partial file and an
earlier FILE as it was. --base-url (or $LINECHECK_ATLAS_URL,
$LINECHECK_GLOBALPING_URL) points at a mirror. Exit 2 on any failure, with
the reason: a malformed id, an HTTP error, a timeout, an answer cut short,
too large, or not a result; 130 when interrupted (Ctrl-C), nothing written.`,
		Example: `  linecheck vantage fetch atlas 1033154 -o atlas-1033154.json
  linecheck trace --replay atlas-1033154.json --vantage 10029
  linecheck vantage fetch globalping ZE5IQWjONEjUq6E8 -o ping-gp.json`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 2 {
				return badInput(fmt.Errorf("vantage fetch takes a platform (%s) and a measurement id, got %d arguments", vantagefetch.PlatformNames(), len(args)))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error { return runVantageFetch(c, args[0], args[1], o) },
	}
	// Flags of a subcommand are made here: lazyFlags serves the root's
	// commands only.
	f := c.Flags()
	{
		f.StringVarP(&o.out, "output", "o", "", "write the results to `FILE` (default PLATFORM-ID.json)")
		f.StringVar(&o.baseURL, "base-url", "", "the API's `URL` (scheme and host) instead of the platform's")
		f.DurationVar(&o.timeout, "timeout", vantagefetch.DefaultTimeout, "give up when the whole answer has not come within this time")
		f.Int64Var(&o.maxBytes, "max-size", vantagefetch.DefaultMaxBytes, "refuse an answer larger than this many `BYTES`")
	}
	return c
}

func runVantageFetch(c *cobra.Command, platform, id string, o vantageFetchOptions) error {
	p, err := vantagefetch.PlatformOf(platform)
	if err != nil {
		return badInput(err)
	}
	if o.timeout <= 0 {
		return badInput(errors.New("--timeout must be positive"))
	}
	if o.maxBytes <= 0 {
		return badInput(errors.New("--max-size must be positive"))
	}
	if o.out == "" {
		o.out = p.Name + "-" + id + ".json"
	}
	ctx, interrupted, stop := interruptContext(c.Context())
	defer stop()
	res, err := vantagefetch.Fetch(ctx, p, id, o.out, vantagefetch.Options{
		BaseURL: o.baseURL, Getenv: os.Getenv, Timeout: o.timeout, MaxBytes: o.maxBytes,
		UserAgent: "linecheck/" + version})
	if err != nil && interrupted() {
		return &exitError{code: 130, err: fmt.Errorf("vantage fetch %s %s interrupted: nothing written", platform, id)}
	}
	if err != nil {
		return badInput(fmt.Errorf("vantage fetch %s %s: %w", platform, id, err))
	}
	fmt.Fprintf(c.OutOrStdout(), "wrote %s: %d bytes from %s\n", res.Path, res.Bytes, res.URL)
	return nil
}
