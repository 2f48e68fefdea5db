package route

import (
	"slices"
	"strings"
	"testing"
)

// path builds one PathHops from one string per TTL (mkTrace's notation).
func path(n int, flows []int, hops ...string) PathHops {
	return PathHops{Path: n, Flows: flows, Hops: mkTrace("", false, hops...).Hops}
}

// pathsCase is one multipath route of TestClassifyPaths.
type pathsCase struct {
	name    string
	paths   []PathHops
	classes []string // per path
	every   string
	ref     string
	weakest string
	differs []PathDeparture
	summary string
}

var giaPath = []string{"10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9", "59.43.130.22", "61.152.24.1", "101.85.1.1"}

var pathsCases = []pathsCase{
	{
		name: "one path of three enters 202.97",
		paths: []PathHops{
			path(1, []int{33434, 33437}, giaPath...),
			path(2, []int{33436, 33439}, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9",
				"202.97.51.2", "202.97.24.9", "61.152.24.1", "101.85.1.1"),
			path(3, []int{33435}, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9",
				"59.43.130.26", "61.152.24.1", "101.85.1.1"),
		},
		classes: []string{LineCN2GIA, LineCN2GT, LineCN2GIA},
		ref:     LineCN2GIA, weakest: LineCN2GT,
		differs: []PathDeparture{{Path: 2, Flows: []int{33436, 33439}, LineClass: LineCN2GT, Reference: 1,
			TTL: 5, Enters: "ChinaNet backbone", Addr: "202.97.51.2"}},
		summary: "path 2 of 3 (flows 33436, 33439) enters the ChinaNet backbone at TTL 5 (202.97.51.2): cn2-gt, not cn2-gia as paths 1, 3",
	},
	{
		name: "GIA on every path",
		paths: []PathHops{
			path(1, []int{33434}, giaPath...),
			path(2, []int{33435, 33436}, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.182.41",
				"59.43.130.22", "61.152.24.1", "101.85.1.1"),
		},
		classes: []string{LineCN2GIA, LineCN2GIA},
		every:   LineCN2GIA, ref: LineCN2GIA, weakest: LineCN2GIA,
		summary: "cn2-gia on every path (2 paths)",
	},
	{
		// Both paths touch the ChinaNet backbone: no network of path 2
		// is new, so it leaves where its addresses part, at its first
		// evidence hop from there.
		name: "a GIA path with one 202.97 delivery hop beside a GT path",
		paths: []PathHops{
			path(1, []int{33434}, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9", "202.97.43.81",
				"61.152.24.1", "101.85.1.1"),
			path(2, []int{33435}, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9", "202.97.51.2",
				"202.97.24.9", "61.152.24.1", "101.85.1.1"),
		},
		classes: []string{LineCN2GIA, LineCN2GT},
		ref:     LineCN2GIA, weakest: LineCN2GT,
		differs: []PathDeparture{{Path: 2, Flows: []int{33435}, LineClass: LineCN2GT, Reference: 1,
			TTL: 5, Enters: "ChinaNet backbone", Addr: "202.97.51.2"}},
		summary: "path 2 of 2 (flow 33435) enters the ChinaNet backbone at TTL 5 (202.97.51.2): cn2-gt, not cn2-gia as path 1",
	},
	{
		// One path each: the better-ranked class is the reference, and
		// the 163 path is the one named, however the paths are numbered.
		name: "a tie names the weaker path",
		paths: []PathHops{
			path(1, []int{33434}, "10.0.0.1", "184.105.64.1", "202.97.50.234", "202.97.91.190",
				"61.152.24.1", "101.85.1.1"),
			path(2, []int{33435}, giaPath...),
		},
		classes: []string{LineChinaNet163, LineCN2GIA},
		ref:     LineCN2GIA, weakest: LineChinaNet163,
		differs: []PathDeparture{{Path: 1, Flows: []int{33434}, LineClass: LineChinaNet163, Reference: 2,
			TTL: 2, Enters: "HE", Addr: "184.105.64.1"}},
		summary: "path 1 of 2 (flow 33434) enters HE at TTL 2 (184.105.64.1): chinanet-163, not cn2-gia as path 2",
	},
	{
		// Path 2 goes silent after the hoster: unknown, and no TTL
		// where both answered tells the addresses apart.
		name: "a path that goes silent differs without leaving",
		paths: []PathHops{
			path(1, []int{33434}, giaPath...),
			path(2, []int{33435}, "10.0.0.1", "45.64.1.1", "*", "*", "*", "*", "*"),
		},
		classes: []string{LineCN2GIA, LineUnknown},
		ref:     LineCN2GIA, weakest: LineUnknown,
		differs: []PathDeparture{{Path: 2, Flows: []int{33435}, LineClass: LineUnknown, Reference: 1}},
		summary: "path 2 of 2 (flow 33435) answers from the same addresses as path 1: unknown, not cn2-gia as path 1",
	},
}

func TestClassifyPaths(t *testing.T) {
	dst := &Trace{Target: "101.85.1.1", Addr: "101.85.1.1", Protocol: "udp"}
	for _, c := range pathsCases {
		t.Run(c.name, func(t *testing.T) {
			got := ClassifyPaths(dst, c.paths, testDB)
			var classes []string
			for i, p := range got.Paths {
				classes = append(classes, p.LineClass)
				if p.Path != c.paths[i].Path || !slices.Equal(p.Flows, c.paths[i].Flows) {
					t.Errorf("path %d: number %d flows %v, want %d %v", i, p.Path, p.Flows, c.paths[i].Path, c.paths[i].Flows)
				}
				if p.Evidence == nil {
					t.Fatalf("path %d: no evidence", p.Path)
				}
				checkRuleCountsListedHops(t, p.Evidence)
			}
			if !slices.Equal(classes, c.classes) {
				t.Fatalf("classes %v, want %v", classes, c.classes)
			}
			if got.Every != c.every || got.Reference != c.ref || got.Weakest != c.weakest {
				t.Errorf("every %q reference %q weakest %q, want %q %q %q", got.Every, got.Reference, got.Weakest, c.every, c.ref, c.weakest)
			}
			if len(got.Differs) != len(c.differs) {
				t.Fatalf("differs %+v, want %+v", got.Differs, c.differs)
			}
			for i, d := range got.Differs {
				w := c.differs[i]
				if d.Path != w.Path || d.LineClass != w.LineClass || d.Reference != w.Reference || d.TTL != w.TTL ||
					d.Enters != w.Enters || d.Addr != w.Addr || !slices.Equal(d.Flows, w.Flows) {
					t.Errorf("departure %+v, want %+v", d, w)
				}
			}
			if got.Summary != c.summary {
				t.Errorf("summary\n %q\nwant\n %q", got.Summary, c.summary)
			}
		})
	}
}

// Each path is classified as Classify classifies the same hops as one
// trace, and a path that ends on the target has its own network stripped.
func TestClassifyPathsMatchesClassifyPerPath(t *testing.T) {
	dst := &Trace{Target: "101.85.1.1", Addr: "101.85.1.1"}
	p := path(1, []int{7}, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9", "61.152.24.1", "101.85.1.1")
	got := ClassifyPaths(dst, []PathHops{p}, testDB)
	want, wantEv := Classify(mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9",
		"61.152.24.1", "101.85.1.1"), testDB)
	if got.Paths[0].LineClass != want || got.Paths[0].Evidence.Rule != wantEv.Rule ||
		got.Paths[0].Evidence.Landing != wantEv.Landing || got.Paths[0].Evidence.Confidence != wantEv.Confidence {
		t.Errorf("path %+v, Classify %s %+v", got.Paths[0].Evidence, want, wantEv)
	}
	if !strings.Contains(strings.Join(got.Paths[0].Evidence.Notes, "; "), "destination's own network") {
		t.Errorf("a path ending on the target keeps its destination hops: %q", got.Paths[0].Evidence.Notes)
	}
	if got.Summary != "cn2-gia on every path (1 path)" {
		t.Errorf("summary %q", got.Summary)
	}
	if none := ClassifyPaths(nil, nil, nil); none.Every != "" || none.Weakest != "" || none.Summary != "no paths to classify" {
		t.Errorf("no paths: %+v", none)
	}
}

func TestFlowsPhrase(t *testing.T) {
	for _, c := range []struct {
		flows []int
		want  string
	}{
		{nil, "no flows"},
		{[]int{33436}, "flow 33436"},
		{[]int{33436, 33439}, "flows 33436, 33439"},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "flows 1, 2, 3, 4, 5, 6, 7, 8, … 2 more"},
	} {
		if got := FlowsPhrase(c.flows); got != c.want {
			t.Errorf("%v: %q, want %q", c.flows, got, c.want)
		}
	}
}
