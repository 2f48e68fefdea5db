package route

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/linecheck/linecheck/internal/geo"
)

// User is one user location with the carrier the users there are on.
type User struct {
	City    string
	Carrier string // telecom, unicom, mobile or other
}

// UserRoute is a candidate's route toward the users of one carrier and city,
// per direction: the return class from the backtrace result matched to the
// user (same carrier, nearest city), the forward class from a forward trace
// measured from that carrier's network.
type UserRoute struct {
	Carrier string `json:"carrier"`
	City    string `json:"city"`
	// Forward and Return are line classes; "" when that direction was not measured.
	Forward string `json:"forward"`
	Return  string `json:"return"`
	// ReturnTarget names the backtrace result the return class came from.
	ReturnTarget string `json:"return_target,omitempty"`
	ReturnCity   string `json:"return_city,omitempty"`
	// ReturnEvidence is that result's evidence phrase.
	ReturnEvidence string `json:"return_evidence,omitempty"`
	// Allowed are the classes sla.line_classes_by_carrier accepts for this
	// carrier; empty when the SLA sets none.
	Allowed []string `json:"allowed,omitempty"`
	// Pass is the per-carrier class check over the measured directions; nil
	// when there is nothing to check (no allowed classes or nothing measured).
	Pass *bool `json:"pass"`
	// Ping is what the ping vantage on this carrier (nearest to the users)
	// measured of the candidate (recorded.probes: RIPE Atlas, Globalping);
	// nil when no vantage of the carrier pinged it.
	Ping  *CarrierPing `json:"ping"`
	Notes []string     `json:"notes,omitempty"`
}

// CarrierPing is one ping vantage's figures toward a candidate's target
// (definitions.md): RTT percentiles in ms (nil without an answer) and loss
// (nil without a probe).
type CarrierPing struct {
	Vantage  string   `json:"vantage"`
	Sent     int      `json:"sent"`
	RTTP50Ms *float64 `json:"rtt_p50_ms"`
	RTTP95Ms *float64 `json:"rtt_p95_ms"`
	Loss     *float64 `json:"loss"`
}

// UserRoutes builds one UserRoute per user (in order): ret (may be nil) gives
// the return class toward the user's carrier and nearest city; forward (may
// be nil) is a forward trace measured from forwardCarrier's network (the
// vantage's carrier, "" when unknown) and counts for users of that carrier
// only; vantages (may be nil) are the forward traces of a multi-vantage
// recording, annotated, each counting for the users of its vantage's
// carrier (NearestVantage) where forward does not; allowed is
// sla.line_classes_by_carrier (may be nil).
func UserRoutes(users []User, ret *BacktraceDoc, forward *Trace, forwardCarrier string, vantages []*Trace, allowed map[string][]string) []UserRoute {
	out := make([]UserRoute, 0, len(users))
	for _, u := range users {
		r := UserRoute{Carrier: u.Carrier, City: u.City, Allowed: allowed[u.Carrier]}
		if ret != nil {
			if m, ok := ret.MatchUser(u.Carrier, u.City); ok {
				r.Return, r.ReturnTarget, r.ReturnCity, r.ReturnEvidence = m.LineClass, m.Name, m.City, m.EvidencePhrase()
				if !strings.EqualFold(m.City, u.City) {
					r.Notes = append(r.Notes, fmt.Sprintf("return measured toward %s (%s), the nearest %s target", m.City, m.Name, u.Carrier))
				}
				if !m.Reached {
					r.Notes = append(r.Notes, fmt.Sprintf("return target %s not reached: the class rests on the hops seen", m.Name))
				}
			} else {
				r.Notes = append(r.Notes, fmt.Sprintf("the backtrace has no %s target: return not measured for these users", u.Carrier))
			}
		} else {
			r.Notes = append(r.Notes, "no per-carrier return recording: run `linecheck backtrace` on the server and give its JSON as recorded.return")
		}
		if forward != nil && forwardCarrier != "" && forwardCarrier == u.Carrier {
			r.Forward = forward.LineClass
			if r.Forward == "" {
				r.Forward, _ = Classify(forward, nil)
			}
		} else if v, ok := NearestVantage(vantages, u.Carrier, u.City); ok {
			r.Forward = v.LineClass
			if r.Forward == "" {
				r.Forward, _ = Classify(v, nil)
			}
			if !strings.EqualFold(strings.TrimSpace(v.Vantage.City), strings.TrimSpace(u.City)) {
				r.Notes = append(r.Notes, fmt.Sprintf("forward measured from %s, the nearest %s vantage", v.Vantage.Label(), u.Carrier))
			}
		}
		r.Pass = checkAllowed(r)
		out = append(out, r)
	}
	return out
}

// NearestVantage is the trace among ts (annotated: Vantage.UserCarrier set)
// whose vantage is on carrier and nearest to city: the same city, else the
// shortest great-circle distance between known cities, else the first in
// the file; ok is false when no vantage is on carrier. A trace whose run
// failed (Vantage.Error) or has no hops is passed over.
func NearestVantage(ts []*Trace, carrier, city string) (*Trace, bool) {
	i := closestVantage(len(ts), func(i int) *Vantage {
		if len(ts[i].Hops) == 0 {
			return nil
		}
		return ts[i].Vantage
	}, carrier, city)
	if i < 0 {
		return nil, false
	}
	return ts[i], true
}

// NearestVantageOf is NearestVantage over vantages (annotated) whose
// measurement is elsewhere (ping results): the index in vs of the one on
// carrier nearest to city, -1 when none is; a nil vantage is passed over.
func NearestVantageOf(vs []*Vantage, carrier, city string) int {
	return closestVantage(len(vs), func(i int) *Vantage { return vs[i] }, carrier, city)
}

// closestVantage is the rule of NearestVantage over n vantages (at(i) nil: passed
// over): the index of the best, -1 when none is on carrier.
func closestVantage(n int, at func(i int) *Vantage, carrier, city string) int {
	best := -1
	bestDist := math.Inf(1)
	uc, uok := geo.City(city)
	for i := 0; i < n; i++ {
		v := at(i)
		if v == nil || v.UserCarrier != carrier || v.Error != "" {
			continue
		}
		d := math.Inf(1)
		if strings.EqualFold(strings.TrimSpace(v.City), strings.TrimSpace(city)) {
			d = -1
		} else if vc, ok := geo.City(v.City); ok && uok {
			d = geo.GreatCircleKm(uc, vc)
		}
		if best < 0 || d < bestDist {
			best, bestDist = i, d
		}
	}
	return best
}

// checkAllowed passes when every measured direction's class is allowed.
func checkAllowed(r UserRoute) *bool {
	if len(r.Allowed) == 0 || (r.Forward == "" && r.Return == "") {
		return nil
	}
	ok := true
	for _, c := range []string{r.Forward, r.Return} {
		if c == "" {
			continue
		}
		found := false
		for _, a := range r.Allowed {
			if a == c {
				found = true
			}
		}
		ok = ok && found
	}
	return &ok
}

// MarshalJSON writes a direction that was not measured as null, not "".
func (r UserRoute) MarshalJSON() ([]byte, error) {
	type plain UserRoute
	nullable := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return json.Marshal(struct {
		plain
		Forward *string `json:"forward"`
		Return  *string `json:"return"`
	}{plain(r), nullable(r.Forward), nullable(r.Return)})
}
