package exporter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve reads the candidates file with compare's loader: what serve needs
// (names and targets) is required, everything else is optional but checked
// as strictly as compare checks it.
func TestParseTargetsNeedsOnlyNamesAndTargets(t *testing.T) {
	text := `
candidates:
  - name: a
    provider: X
    targets:
      - {addr: 127.0.0.1, protocol: icmp}
      - {addr: 127.0.0.1, protocol: tcp, port: 443}
  - name: b
    region: {city: Hong Kong}
    targets: [{addr: 127.0.0.2}, {addr: localhost, protocol: tcp, port: 22}]
`
	ts, err := ParseTargets([]byte(text), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []Target{
		{Candidate: "a", Addr: "127.0.0.1", Protocol: "icmp", Port: 0}, {Candidate: "a", Addr: "127.0.0.1", Protocol: "tcp", Port: 443},
		{Candidate: "b", Addr: "127.0.0.2", Protocol: "icmp", Port: 0}, {Candidate: "b", Addr: "localhost", Protocol: "tcp", Port: 22},
	}
	if len(ts) != len(want) {
		t.Fatalf("%+v, want %+v", ts, want)
	}
	for i := range want {
		if ts[i] != want[i] {
			t.Errorf("target %d: %+v, want %+v", i, ts[i], want[i])
		}
	}
	if ts[1].Label() != "127.0.0.1:443" || ts[2].Label() != "127.0.0.2" {
		t.Errorf("labels %q %q", ts[1].Label(), ts[2].Label())
	}
}

// Every key or value the loader rejects is refused, with file:line: a typo
// that used to silently probe ICMP, a protocol serve cannot probe, a CIDR
// (once sent to DNS as a name), documentation and recorded-only addresses.
func TestParseTargetsRefusesWhatTheLoaderRejects(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"typo in a key", "candidates:\n  - name: a\n    targets:\n      - {addr: 127.0.0.1, protocl: tcp, port: 443}\n",
			`c.yaml:4: unknown key "protocl"`},
		{"typo in a candidate key", "candidates:\n  - name: a\n    target: [{addr: 127.0.0.1}]\n", `c.yaml:3: unknown key "target"`},
		{"typo at the top", "candidate:\n  - name: a\n", `c.yaml:1: unknown key "candidate"`},
		{"udp", "candidates:\n  - name: a\n    targets: [{addr: 127.0.0.1, protocol: udp, port: 53}]\n", `c.yaml:3: candidates[0] (a).targets[0].protocol: "udp": use icmp or tcp`},
		{"sctp", "candidates: [{name: a, targets: [{addr: 127.0.0.1, protocol: sctp}]}]", `"sctp": use icmp or tcp`},
		{"cidr", "candidates:\n  - name: a\n    targets: [{addr: 127.0.0.0/24}]\n", `c.yaml:3: candidates[0] (a).targets[0].addr: "127.0.0.0/24": one address or host name, not a range or list`},
		{"documentation v4", "candidates:\n  - name: a\n    targets: [{addr: 203.0.113.5}]\n", "c.yaml:3: candidates[0] (a).targets[0].addr: 203.0.113.5 is a documentation address (203.0.113.0/24)"},
		{"documentation v6", "candidates: [{name: a, targets: [{addr: '2001:db8::1'}]}]", "2001:db8::1 is a documentation address"},
		{"recorded only", "recorded_only: true\ncandidates: [{name: a, targets: [{addr: 127.0.0.1}]}]", "c.yaml:1: recorded_only: this file's addresses are illustrative and are never probed"},
		{"offline", "offline: true\ncandidates: [{name: a, targets: [{addr: 127.0.0.1}]}]", "c.yaml:1: recorded_only"},
		{"recorded only, its line", "candidates: [{name: a, targets: [{addr: 127.0.0.1}]}]\n\nrecorded_only: true\n", "c.yaml:3: recorded_only"},
		{"port as a word", "candidates:\n  - name: a\n    targets: [{addr: x, protocol: tcp, port: https}]", `c.yaml:3: `},
		{"tcp without port", "candidates: [{name: a, targets: [{addr: x, protocol: tcp}]}]", "port: required for protocol tcp"},
		{"icmp with port", "candidates: [{name: a, targets: [{addr: x, port: 80}]}]", "ICMP has no port"},
		{"broadcast", "candidates: [{name: a, targets: [{addr: 255.255.255.255}]}]", "255.255.255.255\" is a broadcast or multicast address: it is never probed"},
		{"not a name", "candidates: [{name: a, targets: [{addr: 'a..b'}]}]", "neither an IP address nor a host name"},
		{"no candidates", "candidates: []", "c.yaml:1: candidates: at least one candidate is required"},
		{"no targets", "candidates: [{name: a}]", "candidates[0] (a).targets: at least one probe target is required"},
		{"nameless", "candidates: [{targets: [{addr: x}]}]", "candidates[0].name: required"},
		{"name twice", "candidates:\n  - {name: a, targets: [{addr: x}]}\n  - {name: a, targets: [{addr: y}]}\n", `c.yaml:3: candidates[1].name: "a" already used on line 2`},
		{"target twice", "candidates:\n  - name: a\n    targets:\n      - {addr: x}\n      - {addr: x, protocol: icmp}\n", "c.yaml:5: candidates[0] (a).targets[1]: x icmp is already listed on line 4"},
		{"wrong type", "candidates: 5", "c.yaml:1: "},
		{"bad yaml", "candidates: {", "c.yaml:1: "},
		{"empty", "", "c.yaml:1: empty file"},
		// Optional parts are still checked when given.
		{"unknown region", "candidates: [{name: a, region: {city: Atlantis}, targets: [{addr: x}]}]", `region.city: "Atlantis" is not in the embedded city table`},
		{"bad sla", "sla: {loss: 2}\ncandidates: [{name: a, targets: [{addr: x}]}]", "sla.loss: 2: a fraction 0..1"},
		{"sla typo", "sla: {los: 0.01}\ncandidates: [{name: a, targets: [{addr: x}]}]", `unknown key "los"`},
		{"bad traffic", "traffic: {monthly_gb: -1, peak_mbps: 5}\ncandidates: [{name: a, targets: [{addr: x}]}]", "traffic.monthly_gb: -1: must be > 0"},
	} {
		_, err := ParseTargets([]byte(tc.text), "c.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

// The bundled sample is recorded_only (its addresses are illustrative):
// serve refuses it, and without the mark still refuses its documentation
// addresses; with loopback addresses in their place it loads, since the
// schema is compare's.
func TestLoadTargetsRefusesTheBundledSample(t *testing.T) {
	sample := filepath.Join("..", "..", "samples", "candidates.yaml")
	if _, err := LoadTargets(sample); err == nil || !strings.Contains(err.Error(), "recorded_only") {
		t.Fatalf("bundled sample: %v, want refused as recorded_only", err)
	}
	b, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "recorded_only: true", "recorded_only: false", 1)
	if _, err := ParseTargets([]byte(text), sample); err == nil || !strings.Contains(err.Error(), "is a documentation address") {
		t.Errorf("unmarked sample: %v, want its documentation addresses refused", err)
	}
	text = strings.NewReplacer("203.0.113.", "127.0.113.", "198.51.100.", "127.51.100.", "192.0.2.", "127.0.2.").Replace(text)
	ts, err := ParseTargets([]byte(text), sample)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, x := range ts {
		if x.Candidate == "" || x.Addr == "" || (x.Protocol != "icmp" && x.Protocol != "tcp") {
			t.Errorf("target %+v", x)
		}
		seen[x.Candidate] = true
	}
	if len(seen) < 2 {
		t.Errorf("candidates %v", seen)
	}
}

// Whatever the file, the loader returns an error or targets serve can
// probe: never a panic, never a protocol it does not probe, a range, or a
// documentation address.
func FuzzParseTargets(f *testing.F) {
	for _, seed := range []string{
		"candidates: [{name: a, targets: [{addr: 127.0.0.1}]}]",
		"candidates:\n  - name: a\n    targets: [{addr: 127.0.0.1, protocl: tcp, port: 443}]\n",
		"candidates: [{name: a, targets: [{addr: 127.0.0.1, protocol: udp, port: 53}]}]",
		"candidates: [{name: a, targets: [{addr: 10.0.0.0/8}]}]",
		"candidates: [{name: a, targets: [{addr: 203.0.113.5}]}]",
		"candidates: [{name: a, targets: [{addr: '2001:db8::1', protocol: tcp, port: 1}]}]",
		"recorded_only: true\ncandidates: [{name: a, targets: [{addr: 127.0.0.1}]}]",
		"candidates: [{name: a, targets: [{addr: x, protocol: tcp, port: [80]}]}]",
		"candidates: [{name: a, targets: [{addr: x, protocol: TCP, port: 65536}]}]",
		"sla: {loss: .nan}\ncandidates: [{name: a, targets: [{addr: x}]}]",
		"candidates: [{name: a, region: {lat: 1e308, lon: 0}, targets: [{addr: x}]}]",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ts, err := ParseTargets([]byte(text), "c.yaml")
		if err != nil {
			return
		}
		for _, x := range ts {
			if x.Protocol != "icmp" && x.Protocol != "tcp" || strings.ContainsAny(x.Addr, "/ ,") || x.Candidate == "" ||
				(x.Protocol == "tcp") != (x.Port > 0) {
				t.Fatalf("accepted %+v from %q", x, text)
			}
			for _, doc := range []string{"192.0.2.", "198.51.100.", "203.0.113.", "2001:db8:"} {
				if strings.HasPrefix(strings.ToLower(x.Addr), doc) {
					t.Fatalf("accepted documentation address %+v from %q", x, text)
				}
			}
		}
	})
}
