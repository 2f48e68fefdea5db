package verdict

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
)

// classify annotates both traces (carrier per responder, class per
// direction) and joins them. The evidence reported is the return path's when
// it decided the class (that is what users download over), else the forward's.
func classify(fwd, ret *route.Trace, db route.ASNDB) (class, direction string, ev *route.LineEvidence, fwdClass, retClass string, notes []string) {
	if fwd != nil {
		route.Annotate(fwd, db)
		fwdClass = fwd.LineClass
	}
	if ret != nil {
		route.Annotate(ret, db)
		retClass = ret.LineClass
	}
	class, direction, notes = route.CombineDirections(fwd, ret)
	switch {
	case ret != nil && ret.LineClass == class && (direction == "both" || direction == "return"):
		ev = ret.LineEvidence
	case fwd != nil && fwd.LineClass == class:
		ev = fwd.LineEvidence
	case ret != nil:
		ev = ret.LineEvidence
	}
	return
}

// relTo names path relative to dir when it lies below it, for reports.
func relTo(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// backtraceReturn reclassifies every route of doc with db and returns the
// one that stands for the candidate's return path: the route toward the first
// user with a carrier (same carrier, nearest city), else the first traced
// route; the note says which one was taken.
func backtraceReturn(doc *route.BacktraceDoc, users []candidates.Place, db route.ASNDB) (*route.Trace, string) {
	doc.Reclassify(db)
	for _, u := range users {
		if u.Carrier == "" {
			continue
		}
		if r, ok := doc.MatchUser(u.Carrier, u.City); ok && r.Trace != nil {
			return r.Trace, fmt.Sprintf("return path: the backtrace route toward %s (%s %s) stands for the users; per carrier in the three-network table", r.Name, r.Carrier, r.City)
		}
	}
	for _, r := range doc.Results {
		if r.Trace != nil {
			return r.Trace, fmt.Sprintf("return path: the backtrace route toward %s stands for the users (no user names a carrier: users: [{city, carrier}])", r.Name)
		}
	}
	return nil, "return path: the backtrace recording has no traced route"
}

// carrierRoutes is the per-carrier view of a candidate for the users that
// name a carrier; nil when none does.
func carrierRoutes(f *candidates.File, m *Measurement) []route.UserRoute {
	var users []route.User
	for _, u := range f.Users {
		if u.Carrier != "" {
			users = append(users, route.User{City: u.String(), Carrier: u.Carrier})
		}
	}
	if len(users) == 0 {
		return nil
	}
	out := route.UserRoutes(users, m.ReturnBacktrace, m.Forward, f.Vantage.Carrier, m.ForwardVantages, f.SLA.LineClassesByCarrier)
	carrierPings(out, m.PingVantages)
	return out
}
