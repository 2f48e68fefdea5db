package promclient

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/billing/ingest"
)

// Step is the evaluation step of billing queries: one point per billing slot.
const Step = billing.SlotSeconds * time.Second

// BillingRange returns the evaluation times that cover the slots of the
// period [from, to): a rate at t covers (t−300, t], so the slot starting at s
// is read at s+300, and the range runs from from+300 to to.
func BillingRange(from, to time.Time) (start, end time.Time) {
	return from.Add(Step), to
}

// FetchBilling runs the inbound and outbound queries (each giving bit/s, such
// as rate(ifHCInOctets[5m])*8) over the period [from, to), both at once, and
// returns one billing series per label set, built by ingest.PromSeries (the
// converter of saved answers too). opts carries the time zone and port speed
// of the read; its period is [from, to).
func (c *Client) FetchBilling(ctx context.Context, queryIn, queryOut string, from, to time.Time, opts ingest.ReadOptions) ([]*billing.Series, error) {
	if from.Unix()%billing.SlotSeconds != 0 || to.Unix()%billing.SlotSeconds != 0 {
		return nil, fmt.Errorf("period %s – %s: must start and end on a 5-minute boundary", from, to)
	}
	start, end := BillingRange(from, to)
	bud := &budget{left: c.cfg.MaxSamples}
	var (
		res  [2][]*ingest.PromResult
		errs [2]error
		wg   sync.WaitGroup
	)
	// Both run to their end, also when one fails: the error reported is then
	// always the first query's, whatever the timing.
	for i, q := range []string{queryIn, queryOut} {
		wg.Go(func() {
			res[i], errs[i] = c.queryRange(ctx, q, start, end, Step, bud)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s: %w", [2]string{"--query-in", "--query-out"}[i], errs[i])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if len(res[0]) == 0 && len(res[1]) == 0 {
		return nil, fmt.Errorf("%s: both queries returned no series: check the metric names, labels and the period", c.Source())
	}
	var all []*ingest.PromResult
	for i, rs := range res {
		for _, r := range rs {
			r.Dir = [2]string{"in", "out"}[i]
			all = append(all, r)
		}
	}
	opts.From, opts.To = from.Unix(), to.Unix()
	return ingest.PromSeries(all, c.Source(), opts, ingest.PromOptions{Step: billing.SlotSeconds, Paired: true, Queries: [2]string{queryIn, queryOut}})
}

// Source is the server URL as reports show it: without any user or password.
func (c *Client) Source() string {
	u := *c.base
	u.User = nil
	return u.String()
}
