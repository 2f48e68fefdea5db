package route

import (
	"net/netip"
	"testing"

	"github.com/linecheck/linecheck/internal/asn"
)

// bundledNames is the chain compare uses with the bundled snapshot only (no
// cached copy, no --asn-db): the carrier table, then the dataset.
func bundledNames(t *testing.T) *Names {
	t.Helper()
	tb, err := asn.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	return &Names{Dataset: tb, Origin: "bundled"}
}

// The IPv6 routes (testdata/ipv6-routes.txt) are built from real prefixes:
// every hop the file names with asn:N is in a range the bundled snapshot
// gives to that AS. A file edited to a made-up address fails here.
func TestIPv6RoutePrefixesAreReal(t *testing.T) {
	tb, err := asn.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range readRoutesFile(t, "testdata/ipv6-routes.txt") {
		for addr, want := range r.asns {
			inf, ok := tb.Lookup(netip.MustParseAddr(addr))
			if !ok || int(inf.ASN) != want {
				t.Errorf("%s: %s is AS%d in the bundled data (found %v), the file says AS%d", r.id, addr, inf.ASN, ok, want)
			}
			n++
		}
	}
	if n < 20 {
		t.Errorf("%d hops checked against the AS data, want at least 20", n)
	}
}

// IPv6 has no 59.43/16 or 202.97/16: the line class of an IPv6 route comes
// from the AS of its hops (AS4809 CN2 vs AS4134 163, AS9929/AS10099 vs
// AS4837, AS58807 CMIN2 vs AS58453 CMI), with the bundled data as compare
// uses it. Without the AS data the CN2 route has no CN2 hop at all.
func TestIPv6RoutesClassedByASPath(t *testing.T) {
	db := bundledNames(t)
	want := map[string]bool{}
	for _, r := range readRoutesFile(t, "testdata/ipv6-routes.txt") {
		t.Run(r.id, func(t *testing.T) {
			checkClass(t, r, db)
			if r.class == LineCN2GIA {
				if c, _ := Classify(r.trace, nil); c == LineCN2GIA {
					t.Errorf("without the AS data the IPv6 CN2 route is still %s: the test would not show the AS path deciding", c)
				}
			}
		})
		want[r.class] = true
	}
	for _, c := range []string{LineCN2GIA, LineChinaNet163, LineCU9929, LineCU4837, LineCMIN2, LineCMI} {
		if !want[c] {
			t.Errorf("no IPv6 route of class %s", c)
		}
	}
}

// The published IPv6 routes (testdata/ipv6-public-routes.txt, transcribed
// from public VPS reviews with their sources) get the class a person gives
// them from the AS path, written with the reasoning next to each route, with
// the bundled data as compare uses it.
func TestIPv6PublishedRoutesClassedByASPath(t *testing.T) {
	db := bundledNames(t)
	routes := readRoutesFile(t, "testdata/ipv6-public-routes.txt")
	classes := map[string]int{}
	for _, r := range routes {
		t.Run(r.id, func(t *testing.T) {
			if r.source == "" || r.direction == "" || r.class == "" || r.reading == "" || r.trace.Addr == "" {
				t.Fatalf("line %d: a published route needs source, direction, class, reading and target", r.line)
			}
			if !netip.MustParseAddr(r.trace.Addr).Is6() {
				t.Fatalf("target %s is not IPv6", r.trace.Addr)
			}
			if r.rtts == 0 {
				t.Errorf("no published RTT transcribed")
			}
			checkClass(t, r, db)
		})
		classes[r.class]++
	}
	if len(routes) < 12 {
		t.Errorf("%d published routes, want at least 12", len(routes))
	}
	for _, c := range []string{LineChinaNet163, LineCU4837, LineCMI} {
		if classes[c] < 2 {
			t.Errorf("%d published routes of class %s, want at least 2", classes[c], c)
		}
	}
}

// The publishing tools printed an AS beside most hops of the published IPv6
// routes (NextTrace with LeoMoeAPI): an AS source independent of linecheck's.
// On every hop whose printed AS is one that decides a line class, linecheck's
// carrier (bundled table and dataset, as compare uses them) has the same AS.
func TestIPv6PublishedRoutesASAgreesWithPublisher(t *testing.T) {
	db := bundledNames(t)
	deciding := map[int]bool{4134: true, 4809: true, 4837: true, 9929: true, 10099: true, 58453: true, 58807: true}
	n := 0
	for _, r := range readRoutesFile(t, "testdata/ipv6-public-routes.txt") {
		for addr, pub := range r.pubASNs {
			if !deciding[pub] {
				continue
			}
			c, ok := LookupCarrier(netip.MustParseAddr(addr), db)
			if !ok || c.ASN != pub {
				t.Errorf("%s: %s is AS%d for linecheck (found %v), the publisher's tool printed AS%d", r.id, addr, c.ASN, ok, pub)
			}
			n++
		}
	}
	if n < 25 {
		t.Errorf("%d hops checked against the published AS, want at least 25", n)
	}
}
