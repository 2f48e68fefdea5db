package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/billing/ingest"
	"github.com/linecheck/linecheck/internal/promclient"
)

// billPromOptions are the flags of bill --prometheus.
type billPromOptions struct {
	url, queryIn, queryOut string
	bearerFile             string
	basicUser, basicPWFile string
	tlsCA                  string
	tlsInsecure            bool
	timeout                time.Duration
	retries                int
	maxPoints              int
	concurrency            int
	maxSamples             int64
}

const billPromHelp = `

Billing from Prometheus (--prometheus URL):
  Instead of LOG files, fetch the traffic from a Prometheus-compatible server
  (Prometheus, Thanos, Mimir): --query-in and --query-out are PromQL giving
  bit/s, evaluated with query_range at a 300 s step over the period (the value
  at t covers (t-300, t], i.e. the slot starting at t-300). The range is split
  to respect the server's --max-points per series and request, with at most
  --concurrency requests in flight; answers are decoded as they stream in, and
  --max-samples bounds the points kept (memory). Each label set becomes one
  bill, named by its ifName when that is unique, else by the labels that tell
  the series apart; --aggregate sums them per slot into one bill. A saved
  query_range answer read as a LOG is converted by the same rules: the result
  equals bill on the same data read from a file. A query of a 32-bit counter
  (ifInOctets, ifOutOctets) is warned about: rate() loses traffic at each wrap.

  linecheck bill --prometheus http://127.0.0.1:9090 --period 2026-10 \
    --query-in  'rate(ifHCInOctets{ifName="xe-0/0/1"}[5m])*8' \
    --query-out 'rate(ifHCOutOctets{ifName="xe-0/0/1"}[5m])*8' --offers offers.yaml`

// addBillPromFlags gives bill (c) the --prometheus flags, into o.
func addBillPromFlags(c *cobra.Command, o *billPromOptions) {
	lazyFlags(c, func(f *pflag.FlagSet) {
		f.StringVar(&o.url, "prometheus", "", "fetch the traffic from this Prometheus `URL` instead of LOG files")
		f.StringVar(&o.queryIn, "query-in", "", "PromQL giving inbound bit/s, e.g. 'rate(ifHCInOctets{ifName=\"xe-0/0/1\"}[5m])*8'")
		f.StringVar(&o.queryOut, "query-out", "", "PromQL giving outbound bit/s")
		f.StringVar(&o.bearerFile, "bearer-token-file", "", "send the bearer token in `FILE` (read for every request)")
		f.StringVar(&o.basicUser, "basic-auth-user", "", "HTTP basic auth user (with --basic-auth-password-file)")
		f.StringVar(&o.basicPWFile, "basic-auth-password-file", "", "HTTP basic auth password `FILE`")
		f.StringVar(&o.tlsCA, "tls-ca", "", "trust the CA certificates in PEM `FILE` for https")
		f.BoolVar(&o.tlsInsecure, "tls-insecure", false, "do not verify the server's certificate")
		durationVarP(f, &o.timeout, "timeout", "", 60*time.Second, "per-request timeout towards Prometheus (seconds or a Go duration)")
		f.IntVar(&o.retries, "retries", 3, "retries of a failed request (network error, 429, 5xx), with doubling backoff")
		f.IntVar(&o.maxPoints, "max-points", promclient.DefaultMaxPoints, "points per series per request (the server's limit)")
		f.IntVar(&o.concurrency, "concurrency", promclient.DefaultConcurrency, "most requests to Prometheus in flight at once")
		f.Int64Var(&o.maxSamples, "max-samples", promclient.DefaultMaxSamples, "most points one fetch keeps (16 bytes each): bounds memory")
		c.Long += billPromHelp
	})
}

// billPrometheusSeries is bill's series source when --prometheus is given.
func billPrometheusSeries(c *cobra.Command, args []string, o *billPromOptions) ([]*billing.Series, bool, error) {
	if o.url == "" {
		if o.queryIn != "" || o.queryOut != "" {
			return nil, true, badInput(errors.New("--query-in and --query-out need --prometheus URL"))
		}
		return nil, false, nil
	}
	if len(args) > 0 {
		return nil, true, badInput(errors.New("--prometheus reads the traffic from Prometheus: give no LOG files"))
	}
	if o.queryIn == "" || o.queryOut == "" {
		return nil, true, badInput(errors.New("--prometheus needs --query-in and --query-out (PromQL giving bit/s)"))
	}
	p, err := billPromPeriod(c, time.Now())
	if err != nil {
		return nil, true, badInput(err)
	}
	client, err := promclient.New(promclient.Config{URL: o.url, BearerTokenFile: o.bearerFile,
		BasicAuthUser: o.basicUser, BasicAuthPasswordFile: o.basicPWFile, TLSCA: o.tlsCA, TLSInsecure: o.tlsInsecure,
		Timeout: o.timeout, Retries: o.retries, MaxPoints: o.maxPoints, Concurrency: o.concurrency, MaxSamples: o.maxSamples})
	if err != nil {
		return nil, true, badInput(err)
	}
	ctx := c.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	series, err := client.FetchBilling(ctx, o.queryIn, o.queryOut, p.Start, p.End, ingest.ReadOptions{Loc: p.Start.Location()})
	if err != nil {
		var ae *promclient.APIError
		var re *ingest.ReadError
		if errors.As(err, &ae) && ae.ErrorType == "bad_data" || errors.As(err, &re) || errors.Is(err, ingest.ErrTooLarge) {
			return nil, true, badInput(err)
		}
		return nil, true, err
	}
	return series, true, nil
}

// billPromPeriod is the range to fetch: --period, or --from/--to, in --tz;
// without them the last full calendar month before now.
func billPromPeriod(c *cobra.Command, now time.Time) (billing.Period, error) {
	fl := c.Flags()
	get := func(name string) string {
		if fl.Lookup(name) == nil {
			return ""
		}
		v, _ := fl.GetString(name)
		return v
	}
	loc := time.UTC
	if tz := get("tz"); tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return billing.Period{}, fmt.Errorf("--tz %q: %w", tz, err)
		}
		loc = l
	}
	period, from, to := get("period"), get("from"), get("to")
	switch {
	case period != "" && (from != "" || to != ""):
		return billing.Period{}, errors.New("--period and --from/--to: choose one")
	case period != "":
		return billing.ParseMonth(period, loc)
	case from != "" || to != "":
		if from == "" || to == "" {
			return billing.Period{}, errors.New("--prometheus needs both --from and --to (or --period)")
		}
		f, err := billing.ParseTime(from, loc)
		if err != nil {
			return billing.Period{}, fmt.Errorf("--from: %w", err)
		}
		t, err := billing.ParseTime(to, loc)
		if err != nil {
			return billing.Period{}, fmt.Errorf("--to: %w", err)
		}
		return billing.RangePeriod(f, t, loc)
	}
	n := now.In(loc)
	return billing.MonthPeriod(n.Year(), n.Month()-1, loc), nil
}
