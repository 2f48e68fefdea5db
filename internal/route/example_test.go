package route_test

import (
	"fmt"
	"net/netip"

	"github.com/linecheck/linecheck/internal/route"
)

// Replaying a recorded return trace (`mtr --json`) and classifying it with
// the bundled prefix table alone.
func ExampleAnnotate() {
	t, err := route.ReadTraceFile("../../samples/rec/hk-cn2-gia-return.mtr.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	route.Annotate(t, nil) // nil: no --asn-db, bundled table only
	for _, h := range t.Hops {
		for _, r := range h.Responders {
			fmt.Printf("%2d %-15s %-14s AS%d\n", h.TTL, r.Addr, r.Carrier, r.ASN)
		}
	}
	fmt.Println(t.LineClass, t.LineEvidence.Confidence)
	fmt.Println(t.LineEvidence.Rule)
	// Output:
	//  1 10.20.0.1       private        AS0
	//  2 203.0.113.1     documentation  AS0
	//  3 59.43.246.145   CN2            AS4809
	//  4 59.43.187.22    CN2            AS4809
	//  5 59.43.130.101   CN2            AS4809
	//  6 59.43.80.117    CN2            AS4809
	//  7 59.43.182.197   CN2            AS4809
	//  8 61.152.8.46                    AS0
	//  9 101.95.120.34                  AS0
	// 10 198.51.100.7    documentation  AS0
	// cn2-gia high
	// CN2 (59.43.0.0/16, AS4809) on the long haul without a ChinaNet backbone run: 5 evidence hop(s) (5 CN2)
}

func ExampleLookupCarrier() {
	for _, a := range []string{"59.43.1.1", "202.97.94.1", "223.120.130.6", "223.120.2.5", "129.250.3.1", "100.64.0.1"} {
		c, ok := route.LookupCarrier(netip.MustParseAddr(a), nil)
		fmt.Printf("%-14s %-5v %-9s %-8s AS%d\n", a, ok, c.Name, c.Class, c.ASN)
	}
	// Output:
	// 59.43.1.1      true  CN2       cn2      AS4809
	// 202.97.94.1    true  ChinaNet  chinanet AS4134
	// 223.120.130.6  true  CMIN2     cmin2    AS58807
	// 223.120.2.5    true  CMI       cmi      AS58453
	// 129.250.3.1    true  NTT       transit  AS2914
	// 100.64.0.1     false                    AS0
}

func ExampleCombineDirections() {
	fwd := &route.Trace{LineClass: route.LineCN2GIA, Hops: []route.Hop{{TTL: 1}}}
	ret := &route.Trace{LineClass: route.LineChinaNet163, Hops: []route.Hop{{TTL: 1}}}
	fmt.Println(route.CombineDirections(fwd, ret))
	fmt.Println(route.CombineDirections(fwd, nil))
	// Output:
	// chinanet-163 both [asymmetric route: forward cn2-gia, return chinanet-163; reporting the weaker, chinanet-163]
	// cn2-gia forward [return path not validated: no return trace]
}
