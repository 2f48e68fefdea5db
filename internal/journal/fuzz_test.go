package journal

import (
	"bytes"
	"strings"
	"testing"
)

// Decode never panics, and whatever it accepts it accepts in full lines
// (Good never exceeds the input, and a torn tail is the rest of the input).
func FuzzDecode(f *testing.F) {
	good := `{"schema":"linecheck.journal/v1","kind":"ping","cycle":1,"run":1,"time":"2026-11-01T00:00:00Z","ping":[{"target":"a","addr":"a","protocol":"icmp","sent":1,"recv":1,"late":0,"duplicates":0,"rtt_ms":[1]}]}`
	f.Add([]byte(good + "\n"))
	f.Add([]byte(good + "\n" + good[:40]))
	f.Add([]byte("\n\n"))
	f.Add([]byte(good)) // whole, without its newline: kept
	for _, bad := range []string{`"sent":-1,"recv":0`, `"sent":1,"recv":7`, `"sent":1,"recv":-1`} {
		f.Add([]byte(strings.Replace(good, `"sent":1,"recv":1`, bad, 1) + "\n"))
	}
	for _, rtt := range []string{"1e308", "-1", "NaN"} {
		f.Add([]byte(good + "\n" + strings.Replace(strings.Replace(good, `"rtt_ms":[1]`, `"rtt_ms":[`+rtt+`]`, 1), `"cycle":1`, `"cycle":2`, 1) + "\n"))
	}
	f.Add([]byte(`{"schema":"linecheck.journal/v1","kind":"trace","cycle":1,"trace":{"hops":[]}}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, info, err := Decode(bytes.NewReader(b), "f")
		if err != nil {
			return
		}
		if info.Good > int64(len(b)) {
			t.Fatalf("good %d > %d", info.Good, len(b))
		}
		if info.Torn && info.Good+int64(info.TornBytes) != int64(len(b)) {
			t.Fatalf("torn tail %d + good %d != %d", info.TornBytes, info.Good, len(b))
		}
		for _, e := range es {
			if err := validate(e); err != nil {
				t.Fatalf("accepted an impossible entry: %v", err)
			}
		}
		for i := 1; i < len(es); i++ {
			if es[i].Cycle <= es[i-1].Cycle {
				t.Fatalf("cycles not increasing: %d after %d", es[i].Cycle, es[i-1].Cycle)
			}
		}
	})
}
