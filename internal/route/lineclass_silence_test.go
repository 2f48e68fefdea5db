package route

import (
	"slices"
	"strings"
	"testing"
)

// One address answering at two TTLs is one router: the rule counts it once
// and the confidence follows the routers, not the TTLs.
func TestEvidenceCountsRoutersNotTTLs(t *testing.T) {
	cases := []struct {
		name       string
		trace      *Trace
		class      string // the class, when the case is about it
		count      string // the rule's count phrase
		confidence string
		note       string
	}{
		{
			name: "six CN2 TTLs from three routers",
			trace: mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.246.1",
				"59.43.187.9", "59.43.187.9", "59.43.130.22", "59.43.130.22", "61.152.24.1", "101.85.1.1"),
			count: "3 evidence hop(s) (3 CN2)", confidence: ConfidenceHigh,
			note: "59.43.246.1 answers at TTL 3, 4: one router",
		},
		{
			// Two TTLs of one 59.43 router used to count as two CN2 hops,
			// which confirmed GIA.
			name: "one CN2 router at two TTLs does not confirm GIA",
			trace: mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.246.1",
				"61.152.24.1", "101.85.1.1"),
			count: "1 evidence hop(s) (1 CN2)", confidence: ConfidenceLow, note: "GIA not confirmed",
		},
		{
			// One 202.97 router at two TTLs is one router of evidence, but
			// the route spends two TTLs in the 163 backbone after CN2: GT
			// (issue 35; the round before counted it as no run at all).
			name: "one 202.97 router at two TTLs is one hop of evidence and GT's run",
			trace: mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9",
				"202.97.51.2", "202.97.51.2", "61.152.24.1", "101.85.1.1"),
			class: LineCN2GT,
			count: "3 evidence hop(s) (2 CN2, 1 ChinaNet backbone)", confidence: ConfidenceHigh,
			note: "202.97.51.2 answers at TTL 5, 6",
		},
		{
			// One 202.97 hop at one TTL after CN2 stays the tolerated
			// hand-off (the Sharon Hong Kong GIA returns).
			name: "one 202.97 router at one TTL is a hand-off hop",
			trace: mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9",
				"202.97.51.2", "61.152.24.1", "101.85.1.1"),
			class: LineCN2GIA,
			count: "3 evidence hop(s) (2 CN2, 1 ChinaNet backbone)", confidence: ConfidenceHigh,
			note: "tolerated as hand-off",
		},
		{
			name: "ECMP responders of one TTL stay one hop",
			trace: mkTrace("101.85.1.1", true, "10.0.0.1", "184.105.64.1", "202.97.50.234|202.97.50.238",
				"202.97.91.190", "61.152.24.1", "101.85.1.1"),
			count: "2 evidence hop(s) (2 ChinaNet backbone)", confidence: ConfidenceHigh,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			class, ev := Classify(c.trace, testDB)
			if c.class != "" && class != c.class {
				t.Errorf("class %s, want %s (rule %q, notes %q)", class, c.class, ev.Rule, ev.Notes)
			}
			if !strings.Contains(ev.Rule, c.count) {
				t.Errorf("rule %q, want %q", ev.Rule, c.count)
			}
			if ev.Confidence != c.confidence {
				t.Errorf("confidence %s, want %s (%q)", ev.Confidence, c.confidence, ev.Notes)
			}
			if c.note != "" && !strings.Contains(strings.Join(ev.Notes, "; "), c.note) {
				t.Errorf("notes %q lack %q", ev.Notes, c.note)
			}
			checkRuleCountsListedHops(t, ev)
		})
	}
}

// silenceCase is one route of TestSilenceWhereDistinguishingHopsWouldBe.
type silenceCase struct {
	name        string
	trace       *Trace
	want        string
	confidence  string
	notRuledOut []string
	note        string
}

var silenceCases = []silenceCase{
	{
		name: "return: silent between the CN2 border and the destination province",
		trace: mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9",
			"*", "*", "61.152.24.1", "101.85.1.1"),
		want: LineCN2GIA, confidence: ConfidenceMedium, notRuledOut: []string{LineCN2GT},
		note: "TTL 5–6 are silent between the answers at TTL 4 and TTL 7, where CN2 GT's ChinaNet backbone (202.97) run would answer: cn2-gt not ruled out; confidence lowered from high to medium",
	},
	{
		name: "return: one 202.97 hop after CN2, then silence up to the province",
		trace: mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9",
			"202.97.51.2", "*", "*", "61.152.24.1", "101.85.1.1"),
		want: LineCN2GIA, confidence: ConfidenceMedium, notRuledOut: []string{LineCN2GT},
	},
	{
		name: "return without an ASN database: the province is an address no table knows",
		trace: mkTrace("101.85.1.1", false, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9",
			"*", "*", "*", "101.95.88.174"),
		want: LineCN2GIA, confidence: ConfidenceMedium, notRuledOut: []string{LineCN2GT},
	},
	{
		name: "unreached: silent from the CN2 border to the end",
		trace: mkTrace("101.85.1.1", false, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9",
			"*", "*", "*"),
		want: LineCN2GIA, confidence: ConfidenceMedium, notRuledOut: []string{LineCN2GT},
		note: "after the answer at TTL 4, to the end of the trace",
	},
	{
		name: "a single CN2 hop: low stays low, the class not ruled out is still named",
		trace: mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "59.43.246.1",
			"*", "*", "61.152.24.1", "101.85.1.1"),
		want: LineCN2GIA, confidence: ConfidenceLow, notRuledOut: []string{LineCN2GT},
	},
	{
		name: "forward: silent between the user's Telecom province and CN2",
		trace: mkTrace("45.64.9.9", true, "192.168.1.1", "61.152.24.1", "61.152.8.1", "*", "*",
			"59.43.246.1", "59.43.187.9", "130.94.1.1", "45.64.9.9"),
		want: LineCN2GIA, confidence: ConfidenceMedium, notRuledOut: []string{LineCN2GT},
	},
	{
		name: "163 return: silent between the transit carrier and 202.97, where GT's 59.43 would be",
		trace: mkTrace("101.85.1.1", true, "10.0.0.1", "184.105.64.1", "*", "*", "202.97.50.234",
			"202.97.91.190", "61.152.24.1", "101.85.1.1"),
		want: LineChinaNet163, confidence: ConfidenceMedium, notRuledOut: []string{LineCN2GT},
		note: "where CN2 GT's CN2 (59.43) hops would answer",
	},
	{
		name: "163 forward: silent between 202.97 and the carrier abroad",
		trace: mkTrace("45.64.9.9", true, "192.168.1.1", "61.152.24.1", "202.97.50.234", "202.97.91.190",
			"*", "*", "130.94.1.1", "45.64.9.9"),
		want: LineChinaNet163, confidence: ConfidenceMedium, notRuledOut: []string{LineCN2GT},
	},
	// Silence elsewhere leaves the confidence alone.
	{
		name: "return: silent between the hoster and CN2",
		trace: mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "*", "*", "59.43.246.1", "59.43.187.9",
			"61.152.24.1", "101.85.1.1"),
		want: LineCN2GIA, confidence: ConfidenceHigh,
	},
	{
		name: "silent inside the CN2 run",
		trace: mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "59.43.246.1", "*", "*", "59.43.187.9",
			"61.152.24.1", "101.85.1.1"),
		want: LineCN2GIA, confidence: ConfidenceHigh,
	},
	{
		name: "a single silent TTL after CN2 is too short to hide GT's run",
		trace: mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9",
			"*", "61.152.24.1", "101.85.1.1"),
		want: LineCN2GIA, confidence: ConfidenceHigh,
	},
	{
		name: "silent inside the destination province",
		trace: mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9",
			"61.152.24.1", "*", "*", "101.85.1.1"),
		want: LineCN2GIA, confidence: ConfidenceHigh,
	},
	{
		name: "forward leaving China on CN2: silence before the carrier abroad",
		trace: mkTrace("45.64.9.9", true, "192.168.1.1", "61.152.24.1", "59.43.246.1", "59.43.187.9",
			"*", "*", "130.94.1.1", "45.64.9.9"),
		want: LineCN2GIA, confidence: ConfidenceHigh,
	},
	{
		name: "163: silent inside the 202.97 run",
		trace: mkTrace("101.85.1.1", true, "10.0.0.1", "184.105.64.1", "202.97.50.234", "*", "*",
			"202.97.91.190", "61.152.24.1", "101.85.1.1"),
		want: LineChinaNet163, confidence: ConfidenceHigh,
	},
	{
		name: "163: silent between 202.97 and the province",
		trace: mkTrace("101.85.1.1", true, "10.0.0.1", "184.105.64.1", "202.97.50.234", "202.97.91.190",
			"*", "*", "61.152.24.1", "101.85.1.1"),
		want: LineChinaNet163, confidence: ConfidenceHigh,
	},
	{
		name: "GT is GT: nothing better hides in its silence",
		trace: mkTrace("101.85.1.1", true, "45.64.1.1", "59.43.247.1", "59.43.186.2", "202.97.51.2",
			"202.97.24.9", "*", "*", "61.152.24.1", "101.85.1.1"),
		want: LineCN2GT, confidence: ConfidenceHigh,
	},
}

// A run of silent TTLs where GT's 202.97 run (or GT's 59.43 hops beside a
// 163 backbone) would answer lowers the confidence and names the class not
// ruled out; silence anywhere else does not.
func TestSilenceWhereDistinguishingHopsWouldBe(t *testing.T) {
	for _, c := range silenceCases {
		t.Run(c.name, func(t *testing.T) {
			got, ev := Classify(c.trace, testDB)
			if got != c.want {
				t.Fatalf("class %s, want %s (%q)", got, c.want, ev.Rule)
			}
			if ev.Confidence != c.confidence {
				t.Errorf("confidence %s, want %s (notes %q)", ev.Confidence, c.confidence, ev.Notes)
			}
			if !slices.Equal(ev.NotRuledOut, c.notRuledOut) {
				t.Errorf("not ruled out %q, want %q (notes %q)", ev.NotRuledOut, c.notRuledOut, ev.Notes)
			}
			if c.note != "" && !strings.Contains(strings.Join(ev.Notes, "; "), c.note) {
				t.Errorf("notes %q lack %q", ev.Notes, c.note)
			}
			checkRuleCountsListedHops(t, ev)
		})
	}
}
