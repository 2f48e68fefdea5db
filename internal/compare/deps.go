package compare

// Adapters over the route analysis (internal/route), kept in one place so
// that the rest of the package reads in its own terms.

import (
	"github.com/linecheck/linecheck/internal/route"
)

// LoadHopNames is route.LoadHopNames for compare, the TUI and serve, which
// have no stderr of their own to say why a cached dataset was passed over.
func LoadHopNames(path string, noASN bool, table *route.PrefixTable) (route.ASNDB, error) {
	db, _, err := route.LoadHopNames(path, noASN, table)
	return db, err
}

// readForward reads recorded.forward: one trace, or a file of several
// vantages' traces (vantages set; fwd is the first).
func readForward(path string) (fwd *route.Trace, vantages []*route.Trace, err error) {
	ts, err := route.ReadTracesFile(path)
	if err != nil {
		return nil, nil, err
	}
	if len(ts) > 1 {
		vantages = ts
	}
	return ts[0], vantages, nil
}

// readReturn reads recorded.return: a single trace, or a backtrace document
// (doc set, tr nil: Evaluate picks the route toward the users).
func readReturn(path string) (tr *route.Trace, doc *route.BacktraceDoc, err error) {
	return route.ReadReturnFile(path)
}
