package verdict

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/geo"
)

func ptr(x float64) *float64 { return &x }

var testSLA = candidates.SLA{RTTP95ms: ptr(60), Loss: ptr(0.005), JitterMs: ptr(5), LineClasses: []string{"cn2-gia", "cu-9929", "cmin2"}, MaxStretch: ptr(2.0)}

// goodRoute passes every threshold of testSLA.
func goodRoute() RouteQuality {
	return RouteQuality{LineClass: "cn2-gia", Direction: "both", Sent: 200, Recv: 200,
		RTT: RTTSummary{Min: 20, P50: 25, P95: 31}, Jitter: JitterSummary{RFC3550: 1.2, MeanAbs: 1.3}, FloorMs: 12.27, Stretch: 1.63}
}

func checkByName(v Verdict, name string) (Check, bool) {
	for _, c := range v.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

func TestSLAChecks(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(q *RouteQuality)
		fail   []string // checks expected to fail; every other must pass
	}{
		{"all within thresholds", func(q *RouteQuality) {}, nil},
		{"p95 exactly at the limit passes", func(q *RouteQuality) { q.RTT.P95 = 60 }, nil},
		{"p95 above the limit", func(q *RouteQuality) { q.RTT.P95 = 60.01 }, []string{CheckRTTP95}},
		{"loss 1 in 200 = 0.5 % passes", func(q *RouteQuality) { q.Recv = 199; q.Loss = 0.005 }, nil},
		{"loss 2 in 200 fails", func(q *RouteQuality) { q.Recv = 198; q.Loss = 0.01 }, []string{CheckLoss}},
		{"jitter above", func(q *RouteQuality) { q.Jitter.MeanAbs = 5.5 }, []string{CheckJitter}},
		// The verdict is the whole window's mean |D|: a calm last 16 probes (a
		// low running RFC 3550 value) do not pass a jittery window.
		{"jitter above, running value below", func(q *RouteQuality) { q.Jitter.MeanAbs, q.Jitter.RFC3550 = 5.5, 0.2 }, []string{CheckJitter}},
		{"running value above, window below", func(q *RouteQuality) { q.Jitter.RFC3550 = 9 }, nil},
		{"ordinary 163 line", func(q *RouteQuality) { q.LineClass = "chinanet-163" }, []string{CheckLineClass}},
		{"class unknown", func(q *RouteQuality) { q.LineClass = "" }, []string{CheckLineClass}},
		{"stretch above", func(q *RouteQuality) { q.Stretch = 2.4 }, []string{CheckStretch}},
		{"below the physical floor", func(q *RouteQuality) { q.Stretch = 0.8; q.StretchFlags = []string{"below-floor"} }, []string{CheckStretch}},
		{"nothing answered fails every measured check", func(q *RouteQuality) { q.Recv = 0; q.Loss = 1 },
			[]string{CheckRTTP95, CheckLoss, CheckJitter, CheckStretch}},
		{"nothing recorded", func(q *RouteQuality) { q.Recv, q.Sent = 0, 0 },
			[]string{CheckRTTP95, CheckLoss, CheckJitter, CheckStretch}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := goodRoute()
			tc.mutate(&q)
			v := CheckSLA(testSLA, q)
			if len(v.Checks) != 5 {
				t.Fatalf("%d checks, want 5", len(v.Checks))
			}
			want := map[string]bool{}
			for _, n := range tc.fail {
				want[n] = true
			}
			for _, c := range v.Checks {
				if c.Pass == want[c.Name] {
					t.Errorf("%s: pass=%v (measured %v, required %v)", c.Name, c.Pass, c.Measured, c.Required)
				}
			}
			if v.Pass != (len(tc.fail) == 0) {
				t.Errorf("verdict pass=%v, want %v", v.Pass, len(tc.fail) == 0)
			}
		})
	}
}

func TestSLACheckFieldsAndDirectionNotes(t *testing.T) {
	q := goodRoute()
	q.Direction = "forward"
	v := CheckSLA(testSLA, q)
	c, _ := checkByName(v, CheckRTTP95)
	if c.Required != 60.0 || c.Measured != 31.0 || c.Unit != "ms" || !c.Pass {
		t.Errorf("rtt check = %+v", c)
	}
	lc, _ := checkByName(v, CheckLineClass)
	if lc.Measured != "cn2-gia" || !lc.Pass || lc.Note == "" {
		t.Errorf("forward-only class check = %+v, want pass with a note about the return path", lc)
	}
	q.Direction = "none"
	q.LineClass = "unknown"
	lc, _ = checkByName(CheckSLA(testSLA, q), CheckLineClass)
	if lc.Pass {
		t.Errorf("class without any trace passed: %+v", lc)
	}
}

func TestSLAWithoutThresholdsHasNoChecksAndPasses(t *testing.T) {
	v := CheckSLA(candidates.SLA{}, RouteQuality{})
	if len(v.Checks) != 0 || !v.Pass {
		t.Errorf("empty SLA: %+v", v)
	}
}

// One phrase says what was not validated, in the SLA note, the report and the
// HTML alike; a trace that ran but gave no class (a loopback or lab route) is
// not "no trace".
func TestValidationGapTellsNoTraceFromNoClass(t *testing.T) {
	for _, tc := range []struct {
		q    RouteQuality
		want string
	}{
		{RouteQuality{Direction: "both"}, ""},
		{RouteQuality{Direction: "forward"}, "validated on the forward path only; the return path (server → users) was not checked"},
		{RouteQuality{Direction: "return"}, "validated on the return path only; the forward path (users → server) was not checked"},
		{RouteQuality{Direction: "none", ForwardClass: "unknown"}, "traced, but no direction gave a line class"},
		{RouteQuality{Direction: "none"}, "no trace in either direction"},
	} {
		got := tc.q.ValidationGap()
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.q, got, tc.want)
		}
	}
	s := candidates.SLA{LineClasses: []string{"cn2-gia"}}
	v := CheckSLA(s, RouteQuality{Direction: "none", ForwardClass: "unknown", LineClass: "unknown"})
	if len(v.Checks) != 1 || v.Checks[0].Pass || !strings.Contains(v.Checks[0].Note, "traced, but no direction gave a line class") {
		t.Errorf("SLA check: %+v", v.Checks)
	}
}

// sla.min_path_mtu: the forward path MTU must be at least the threshold;
// without a measurement the check fails with no data.
func TestSLAMinPathMTU(t *testing.T) {
	min := 1500
	s := candidates.SLA{MinPathMTU: &min}
	for _, c := range []struct {
		mtu  int
		pass bool
		note bool
	}{{1500, true, false}, {9000, true, false}, {1400, false, false}, {0, false, true}} {
		q := goodRoute()
		q.PathMTU = c.mtu
		v := CheckSLA(s, q)
		if len(v.Checks) != 1 || v.Checks[0].Name != CheckPathMTU {
			t.Fatalf("path MTU %d: checks %+v, want one %s", c.mtu, v.Checks, CheckPathMTU)
		}
		ch := v.Checks[0]
		if ch.Pass != c.pass || v.Pass != c.pass || (ch.Note != "") != c.note || ch.Unit != "bytes" || ch.Required != 1500 {
			t.Errorf("path MTU %d: %+v (verdict %v), want pass %v, note %v", c.mtu, ch, v.Pass, c.pass, c.note)
		}
		if c.note && !strings.HasPrefix(ch.Note, NoData) {
			t.Errorf("path MTU unmeasured: note %q, want it to begin %q", ch.Note, NoData)
		}
	}
}

// A loopback (or anycast) target below the physical floor: the note gives
// its min RTT in significant figures, not "0.0 ms" (by hand: 0.0312 ms
// against the 12.27 ms Shanghai–Hong Kong floor).
func TestBelowFloorNoteKeepsASubMillisecondRTT(t *testing.T) {
	q := goodRoute()
	q.RTT.Min, q.Stretch, q.StretchFlags = 0.0312, 0.0312/12.27, []string{"below-floor"}
	c, ok := checkByName(CheckSLA(testSLA, q), CheckStretch)
	if !ok || c.Pass {
		t.Fatalf("stretch check %+v: want a failed check", c)
	}
	if want := "min RTT 0.0312 ms is below the physical floor 12.3 ms"; !strings.HasPrefix(c.Note, want) {
		t.Errorf("note %q, want it to start %q", c.Note, want)
	}
}

// Within the vantage's own city the physical floor is no yardstick: the
// stretch check is not applicable — it passes, measures nothing, says why,
// and the route has no stretch figure — whether the region is the same city
// record or a place under 50 km away, with or without answers; 56 km away
// the stretch is computed and judged again (issue 35: every server in the
// vantage's city failed "physical floor unknown").
func TestStretchNotApplicableWithinTheVantagesCity(t *testing.T) {
	sh, _ := geo.City("Shanghai")
	near := geo.Location{Lat: sh.Lat + 0.1, Lon: sh.Lon}  // ≈ 11.1 km north: floor 0.111 ms
	apart := geo.Location{Lat: sh.Lat + 0.5, Lon: sh.Lon} // ≈ 55.6 km north: floor 0.556 ms
	cases := []struct {
		name      string
		floor     float64
		recv      int
		applies   bool
		wantPass  bool
		wantFloor float64
	}{
		{"same city record", geo.FloorRTTms(sh, sh), 200, false, true, 0},
		{"11 km apart", geo.FloorRTTms(sh, near), 200, false, true, 0.11},
		{"11 km apart, nothing answered", geo.FloorRTTms(sh, near), 0, false, true, 0.11},
		// 1.2 ms over a 0.556 ms floor is a stretch of 2.158 > 2.0.
		{"56 km apart: judged", geo.FloorRTTms(sh, apart), 200, true, false, 0.56},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := goodRoute()
			q.Recv, q.RTT.Min, q.Stretch, q.FloorMs = c.recv, 1.2, 0, 0
			q.SetFloor(c.floor)
			v := CheckSLA(candidates.SLA{MaxStretch: ptr(2.0)}, q)
			ch, ok := checkByName(v, CheckStretch)
			if !ok {
				t.Fatal("no stretch check")
			}
			if q.FloorMs != c.wantFloor || ch.Pass != c.wantPass {
				t.Fatalf("floor %v pass %v (%+v), want floor %v pass %v", q.FloorMs, ch.Pass, ch, c.wantFloor, c.wantPass)
			}
			if c.applies {
				if ch.NotApplicable || ch.Measured != 2.158 || q.Stretch != 2.158 {
					t.Errorf("check %+v, stretch %v: want measured 2.158", ch, q.Stretch)
				}
				return
			}
			want := "not applicable: the region is in the vantage's city"
			if !ch.NotApplicable || ch.Unmeasured || ch.Measured != nil || !strings.HasPrefix(ch.Note, want) || !strings.Contains(ch.Note, "no yardstick") {
				t.Errorf("check %+v: want a passing, not-applicable check noted %q…", ch, want)
			}
			if !v.Pass {
				t.Errorf("verdict fails on a check that does not apply: %+v", v)
			}
			if q.Stretch != 0 || !slices.Contains(q.StretchFlags, geo.FlagSameCity) {
				t.Errorf("stretch %v flags %v: want none and same-city", q.Stretch, q.StretchFlags)
			}
			b, err := json.Marshal(q)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"stretch":null`) || !strings.Contains(string(b), `"stretch_flags":["same-city"]`) {
				t.Errorf("route JSON %s: want stretch null and stretch_flags [same-city]", b)
			}
			b, _ = json.Marshal(ch)
			if !strings.Contains(string(b), `"measured":null,"unit":"ratio","pass":true,"note":"not applicable: `) {
				t.Errorf("check JSON %s", b)
			}
		})
	}
}
