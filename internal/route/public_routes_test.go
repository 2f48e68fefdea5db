package route

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// publicRoute is one recorded route of testdata/public-routes.txt.
type publicRoute struct {
	id, source, direction, class, confidence string
	line                                     int
	trace                                    *Trace
	// asns are the AS numbers a hop line names after its address
	// (`TTL ADDR asn:N`): what the IP-to-AS data must say of the address.
	asns map[string]int
	// pubASNs are the AS numbers the publishing tool printed beside a hop
	// (`TTL ADDR pub-asn:N`), an AS source independent of linecheck's.
	pubASNs map[string]int
	// reading is why a person reading the route gives it its class
	// (`reading:` lines, joined).
	reading string
	// rtts counts the published RTTs read (`TTL ADDR rtt:MS[/MS...]`).
	rtts int
}

// readPublicRoutes parses testdata/public-routes.txt (format in its header).
func readPublicRoutes(t *testing.T) []publicRoute {
	t.Helper()
	return readRoutesFile(t, "testdata/public-routes.txt")
}

// readRoutesFile parses a file of routes in public-routes.txt's format.
func readRoutesFile(t *testing.T, path string) []publicRoute {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []publicRoute
	var cur *publicRoute
	sc := bufio.NewScanner(f)
	n := 0
	fail := func(format string, a ...any) {
		t.Fatalf("%s:%d: %s", path, n, fmt.Sprintf(format, a...))
	}
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, isKV := strings.Cut(line, ": ")
		switch {
		case isKV && key == "route":
			if cur != nil {
				fail("route %s not ended", cur.id)
			}
			cur = &publicRoute{id: val, line: n, trace: &Trace{Schema: TraceSchema, Protocol: "icmp", Source: "replay"}}
		case cur == nil:
			fail("outside a route: %q", line)
		case isKV && key == "source":
			cur.source = val
		case isKV && key == "direction":
			cur.direction = val
		case isKV && key == "class":
			cur.class = val
		case isKV && key == "confidence":
			cur.confidence = val
		case isKV && key == "reading":
			cur.reading = strings.TrimSpace(cur.reading + " " + val)
		case isKV && key == "target":
			addr, state, _ := strings.Cut(val, " ")
			cur.trace.Target, cur.trace.Addr, cur.trace.Reached = addr, addr, state == "reached"
		case line == "end":
			if cur.trace.Reached && len(cur.trace.Hops) > 0 {
				last := &cur.trace.Hops[len(cur.trace.Hops)-1]
				last.Flags = append(last.Flags, "destination")
			}
			out = append(out, *cur)
			cur = nil
		default:
			fields := strings.Fields(line)
			if len(fields) < 2 {
				fail("want `TTL ADDR[|ADDR] [asn:N] [pub-asn:N] [rtt:MS[/MS]]`, got %q", line)
			}
			ttl, err := strconv.Atoi(fields[0])
			if err != nil {
				fail("want `TTL ADDR[|ADDR]`, got %q", line)
			}
			addrs := fields[1]
			h := Hop{TTL: ttl, Sent: 3, Flags: []string{}, Responders: []Responder{}}
			var samples []float64
			lost := 0
			for _, tok := range fields[2:] {
				k, v, _ := strings.Cut(tok, ":")
				switch k {
				case "asn", "pub-asn":
					n, err := strconv.Atoi(v)
					if err != nil || n <= 0 {
						fail("want `%s:N` with N an AS number, got %q", k, line)
					}
					m := &cur.asns
					if k == "pub-asn" {
						m = &cur.pubASNs
					}
					if *m == nil {
						*m = map[string]int{}
					}
					(*m)[addrs] = n
				case "rtt":
					for _, x := range strings.Split(v, "/") {
						if x == "*" {
							lost++
							continue
						}
						ms, err := strconv.ParseFloat(x, 64)
						if err != nil || ms < 0 {
							fail("want `rtt:MS[/MS...]` (ms, or * for a lost probe), got %q", line)
						}
						samples = append(samples, ms)
					}
				default:
					fail("unknown hop field %q in %q (want asn:, pub-asn: or rtt:)", tok, line)
				}
			}
			if addrs == "*" {
				h.Loss = 1
			} else {
				recv := 3
				if samples != nil || lost > 0 {
					h.Sent, recv = len(samples)+lost, len(samples)
					h.Loss = float64(lost) / float64(h.Sent)
					cur.rtts += len(samples)
				}
				for _, a := range strings.Split(addrs, "|") {
					h.Responders = append(h.Responders, Responder{Addr: a, Recv: recv, Samples: samples})
				}
			}
			cur.trace.Hops = append(cur.trace.Hops, h)
		}
	}
	if cur != nil {
		fail("route %s not ended", cur.id)
	}
	return out
}

// checkClass classifies r's trace with db and fails unless it gets r's
// class, and r's confidence where the file writes one, with a rule whose
// counts are the hops it lists.
func checkClass(t *testing.T, r publicRoute, db ASNDB) {
	t.Helper()
	got, ev := Classify(r.trace, db)
	if got != r.class {
		t.Fatalf("class %s, want %s (rule %q, notes %q)", got, r.class, ev.Rule, ev.Notes)
	}
	if r.confidence != "" && ev.Confidence != r.confidence {
		t.Errorf("confidence %s, want %s (rule %q, notes %q)", ev.Confidence, r.confidence, ev.Rule, ev.Notes)
	}
	checkRuleCountsListedHops(t, ev)
}

// The recorded public routes get the class written next to each of them,
// with the bundled table alone (no ASN database).
func TestPublicRecordedRoutes(t *testing.T) {
	routes := readPublicRoutes(t)
	classes := map[string]int{}
	dirs := map[string]int{}
	for _, r := range routes {
		t.Run(r.id, func(t *testing.T) {
			if r.source == "" || r.class == "" || r.direction == "" || r.trace.Addr == "" {
				t.Fatalf("line %d: route needs source, direction, class and target", r.line)
			}
			checkClass(t, r, nil)
		})
		classes[r.class]++
		dirs[r.direction]++
	}
	if len(routes) < 20 {
		t.Errorf("%d routes, want at least 20", len(routes))
	}
	for _, c := range []string{LineCN2GIA, LineCN2GT, LineChinaNet163, LineCU9929, LineCU4837, LineCMIN2, LineCMI, LineTransit, LineUnknown} {
		if classes[c] == 0 {
			t.Errorf("no recorded route of class %s", c)
		}
	}
	if dirs["return"] == 0 || dirs["forward"] == 0 {
		t.Errorf("directions %v: want both return and forward routes", dirs)
	}
}
