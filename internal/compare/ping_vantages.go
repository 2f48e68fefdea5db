package compare

import (
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

// pingVantages reads again the ping result files that hold vantages (RIPE
// Atlas, Globalping: small, read whole either way) and gives each vantage
// its own figures toward the target of targets it pinged (the one with the
// most probes), for the per-carrier table (issue 32). The targets' figures
// pool every vantage (Replay).
func pingVantages(targets []candidates.Target, files []string) ([]verdict.PingVantage, error) {
	var out []verdict.PingVantage
	for _, p := range files {
		ss, err := readStream(p)
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			if s.Vantage == nil {
				continue
			}
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
	}
	return out, nil
}
