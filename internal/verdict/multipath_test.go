package verdict

import (
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
)

// sla.line_classes holds on a multipath route only if it holds on every
// path: one path of another class fails the check, and the note names it.
func TestLineClassMustHoldOnEveryPath(t *testing.T) {
	paths := func(classes ...string) []PathLine {
		var ps []PathLine
		for i, c := range classes {
			ps = append(ps, PathLine{Direction: "forward", Path: i + 1, Of: len(classes), Flows: []int{33434 + i}, LineClass: c})
		}
		return ps
	}
	cases := []struct {
		name     string
		paths    []PathLine
		pass     bool
		measured string
		note     string
	}{
		{"every path allowed", paths("cn2-gia", "cn2-gia", "cu-9929"), true, "cn2-gia", "holds on every path (3)"},
		{"one path of three is GT", func() []PathLine {
			ps := paths("cn2-gia", "cn2-gt", "cn2-gia")
			ps[1].Flows, ps[1].Leaves = []int{33436, 33439}, "enters the ChinaNet backbone at TTL 7 (202.97.50.1)"
			return ps
		}(), false, "cn2-gt",
			"must hold on every path: forward path 2 of 3 (flows 33436, 33439) is cn2-gt: enters the ChinaNet backbone at TTL 7 (202.97.50.1)"},
		{"two paths fail, both named", paths("chinanet-163", "cn2-gia", "transit"), false, "chinanet-163",
			"forward path 1 of 3 (flow 33434) is chinanet-163; forward path 3 of 3 (flow 33436) is transit"},
		{"no paths: the route's class alone", nil, true, "cn2-gia", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := goodRoute()
			q.Paths = c.paths
			v := CheckSLA(testSLA, q)
			ck, ok := checkByName(v, CheckLineClass)
			if !ok {
				t.Fatal("no line_class check")
			}
			if ck.Pass != c.pass || v.Pass != c.pass {
				t.Errorf("check pass %v, verdict %v, want %v (%+v)", ck.Pass, v.Pass, c.pass, ck)
			}
			if ck.Measured != c.measured {
				t.Errorf("measured %v, want %s", ck.Measured, c.measured)
			}
			if c.note == "" && ck.Note != "" || !strings.Contains(ck.Note, c.note) {
				t.Errorf("note %q, want %q", ck.Note, c.note)
			}
		})
	}
}

// pathLines turns route.ClassifyPaths' answer into the report's rows: the
// path of another class is named with where it leaves, and CheckSLA fails
// line_class on it.
func TestPathLinesFromClassifiedPaths(t *testing.T) {
	hops := func(addrs ...string) []route.Hop {
		var hs []route.Hop
		for i, a := range addrs {
			h := route.Hop{TTL: i + 1, Sent: 3, Responders: []route.Responder{}}
			if a != "*" {
				h.Responders = append(h.Responders, route.Responder{Addr: a, Recv: 3})
			}
			hs = append(hs, h)
		}
		return hs
	}
	dst := &route.Trace{Target: "101.85.1.1", Addr: "101.85.1.1"}
	paths := []route.PathHops{
		{Path: 1, Flows: []int{33434, 33436}, Hops: hops("45.64.1.1", "59.43.246.1", "59.43.187.9", "59.43.130.22", "101.85.1.1")},
		{Path: 2, Flows: []int{33435}, Hops: hops("45.64.1.1", "59.43.246.1", "202.97.51.2", "202.97.24.9", "101.85.1.1")},
	}
	lines, summary := pathLines("forward", dst, paths, map[int]float64{1: 2.0 / 3, 2: 1.0 / 3}, nil)
	if len(lines) != 2 || lines[0].LineClass != "cn2-gia" || lines[1].LineClass != "cn2-gt" {
		t.Fatalf("lines %+v", lines)
	}
	if lines[1].Leaves != "enters the ChinaNet backbone at TTL 3 (202.97.51.2)" || lines[0].Leaves != "" {
		t.Errorf("leaves %q / %q", lines[0].Leaves, lines[1].Leaves)
	}
	if lines[1].Share == nil || *lines[1].Share != 1.0/3 || lines[1].Of != 2 || len(lines[1].Hops) != 5 || lines[1].Hops[2].Addr != "202.97.51.2" {
		t.Errorf("path 2 %+v", lines[1])
	}
	want := "forward: path 2 of 2 (flow 33435) enters the ChinaNet backbone at TTL 3 (202.97.51.2): cn2-gt, not cn2-gia as path 1"
	if summary != want {
		t.Errorf("summary %q, want %q", summary, want)
	}
	q := goodRoute()
	q.Paths = lines
	ck, _ := checkByName(CheckSLA(testSLA, q), CheckLineClass)
	if ck.Pass || !strings.Contains(ck.Note, "forward path 2 of 2 (flow 33435) is cn2-gt: enters the ChinaNet backbone at TTL 3") {
		t.Errorf("line_class check %+v", ck)
	}
}
