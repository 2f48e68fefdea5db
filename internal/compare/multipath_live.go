package compare

import (
	"context"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

// liveMultipath traces the forward route of c with multipath discovery; ok
// is false (with a warning) when the prober cannot, and the caller traces
// one path instead.
func liveMultipath(ctx context.Context, c *candidates.Candidate, t candidates.Target, m *verdict.Measurement, addr string, opt Options) (tr *route.Trace, ok bool, err error) {
	mp, can := opt.Prober.(engine.MultipathProber)
	if !can {
		m.Warnings = append(m.Warnings, engine.NoMultipathProber)
		return nil, false, nil
	}
	cfg := engine.MultipathTraceConfig(t, opt.TraceCycles, opt.Timeout)
	opt.progress("%s: multipath discovery toward %s (%s, %d%% confidence)", c.Name, addr, cfg.Proto, cfg.Confidence)
	tr, err = mp.Multipath(ctx, addr, cfg)
	return tr, true, err
}
