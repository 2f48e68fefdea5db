package route

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/linecheck/linecheck/internal/geo"
	"github.com/linecheck/linecheck/internal/stats"
)

// TestBundledSampleRoutes replays the illustrative recordings in samples/rec
// (our JSON forward, `mtr --json` return) and checks what the demo and
// compare rely on: each direction's line class from the bundled table alone,
// the combined class and direction, stats that recompute from samples_ms, a
// stored line_class that is still what Classify says, and destination RTTs
// that respect the physical floor from Shanghai (docs/route.md, physical floor).
func TestBundledSampleRoutes(t *testing.T) {
	dir := filepath.Join("..", "..", "samples", "rec")
	vantage, _ := geo.City("Shanghai")
	cases := []struct {
		candidate, city string
		fwd, ret        string
		combined, dir   string
		minLo, minHi    float64 // expected destination min RTT window, ms
	}{
		{"hk-cn2-gia", "Hong Kong", LineCN2GIA, LineCN2GIA, LineCN2GIA, "both", 26, 29},
		{"hk-bgp", "Hong Kong", LineChinaNet163, LineChinaNet163, LineChinaNet163, "both", 44, 48},
		{"tokyo", "Tokyo", LineChinaNet163, LineChinaNet163, LineChinaNet163, "both", 41, 45},
		{"la", "Los Angeles", LineChinaNet163, LineChinaNet163, LineChinaNet163, "both", 130, 135},
	}
	for _, c := range cases {
		t.Run(c.candidate, func(t *testing.T) {
			fwd, err := ReadTraceFile(filepath.Join(dir, c.candidate+"-forward.json"))
			if err != nil {
				t.Fatal(err)
			}
			ret, err := ReadTraceFile(filepath.Join(dir, c.candidate+"-return.mtr.json"))
			if err != nil {
				t.Fatal(err)
			}
			stored := fwd.LineClass
			Annotate(fwd, nil)
			Annotate(ret, nil)
			if fwd.LineClass != c.fwd || ret.LineClass != c.ret {
				t.Fatalf("forward %s (%s), return %s (%s); want %s, %s", fwd.LineClass, fwd.LineEvidence.Rule,
					ret.LineClass, ret.LineEvidence.Rule, c.fwd, c.ret)
			}
			if stored != fwd.LineClass {
				t.Errorf("stored line_class %q is stale: Classify says %q (regenerate the samples)", stored, fwd.LineClass)
			}
			class, d, notes := CombineDirections(fwd, ret)
			if class != c.combined || d != c.dir {
				t.Errorf("combined %s/%s, want %s/%s (%q)", class, d, c.combined, c.dir, notes)
			}
			if !fwd.Reached || !ret.Reached {
				t.Errorf("reached: forward %v return %v", fwd.Reached, ret.Reached)
			}
			for _, h := range fwd.Hops {
				for _, r := range h.Responders {
					st, j := stats.Summarize(r.Samples)
					if st != r.RTT || j != r.Jitter || r.Recv != len(r.Samples) {
						t.Errorf("TTL %d %s: stored stats %+v %+v differ from samples_ms %+v %+v", h.TTL, r.Addr, r.RTT, r.Jitter, st, j)
					}
				}
				if want := 1 - float64(sumRecv(h))/float64(h.Sent); math.Abs(h.Loss-want) > 1e-9 {
					t.Errorf("TTL %d: loss %g, want %g", h.TTL, h.Loss, want)
				}
			}
			target, _ := geo.City(c.city)
			for name, tr := range map[string]*Trace{"forward": fwd, "return": ret} {
				last := tr.Hops[len(tr.Hops)-1].Responders[0]
				s := geo.Stretch(vantage, target, last.RTT.Min)
				if last.RTT.Min < c.minLo || last.RTT.Min > c.minHi || len(s.Flags) != 0 {
					t.Errorf("%s: destination min %.3f ms, want %g–%g; stretch %+v", name, last.RTT.Min, c.minLo, c.minHi, s)
				}
			}
		})
	}
}

func sumRecv(h Hop) int {
	n := 0
	for _, r := range h.Responders {
		n += r.Recv
	}
	return n
}

// The sample backtrace documents carry the classes they were designed with
// (GIA to Telecom, the GIA tri-network hand-off to Unicom, CMI to Mobile from
// hk-cn2-gia; 163, 4837 and CMI from hk-bgp), and their stored classes are
// what Classify says of their traces.
func TestBundledSampleBacktraces(t *testing.T) {
	want := map[string][]string{
		"hk-cn2-gia-backtrace.json": {LineCN2GIA, LineCN2GIA, LineCMI},
		"hk-bgp-backtrace.json":     {LineChinaNet163, LineCU4837, LineCMI},
	}
	for file, classes := range want {
		d, err := ReadBacktraceFile(filepath.Join("..", "..", "samples", "rec", file))
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Results) != 3 {
			t.Fatalf("%s: %d results", file, len(d.Results))
		}
		for i, r := range d.Results {
			if r.LineClass != classes[i] {
				t.Errorf("%s %s: stored %s, want %s", file, r.Name, r.LineClass, classes[i])
			}
			if got, _ := Classify(r.Trace, nil); got != r.LineClass {
				t.Errorf("%s %s: Classify says %s, stored %s", file, r.Name, got, r.LineClass)
			}
			if !r.Reached || r.RTT.P50 == nil || r.Loss == nil {
				t.Errorf("%s %s: figures %+v", file, r.Name, r)
			}
		}
	}
}
