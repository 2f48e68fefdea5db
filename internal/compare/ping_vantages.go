package compare

import (
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/pingfile"
	"github.com/linecheck/linecheck/internal/verdict"
)

// pingVantages gives each vantage of the ping result files (RIPE Atlas,
// Globalping: the streams scanStreams kept) its own figures toward the
// target of targets it pinged (the one with the most probes), for the
// per-carrier table (issue 32). The targets' figures pool every vantage
// (Replay).
func pingVantages(targets []candidates.Target, streams []pingfile.Stream) []verdict.PingVantage {
	var out []verdict.PingVantage
	for _, s := range streams {
		b := verdict.NewWindowBuilder(targets)
		for _, r := range s.Records {
			b.Add(r)
		}
		ws, _ := b.Windows()
		pv := verdict.PingVantage{Vantage: s.Vantage}
		for i, w := range ws {
			if r := w.Result(targets[i], nil); i == 0 || r.Sent > pv.Result.Sent {
				pv.Result = r
			}
		}
		out = append(out, pv)
	}
	return out
}
