package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
)

// backtraceSecrets reads a backtrace recording as plain JSON (not through
// route's types) and returns the addresses, AS numbers and carrier names of
// the hops at TTL 1..n that no later hop of any route also carries, the
// line class per target, and one address of TTL n+1.
func backtraceSecrets(t *testing.T, raw []byte, n int) (secrets []string, classes map[string]string, shown string) {
	t.Helper()
	var doc struct {
		Results []struct {
			Name      string `json:"name"`
			LineClass string `json:"line_class"`
			Trace     struct {
				Hops []struct {
					TTL        int `json:"ttl"`
					Responders []struct {
						Addr    string `json:"addr"`
						ASN     int    `json:"asn"`
						Carrier string `json:"carrier"`
					} `json:"responders"`
				} `json:"hops"`
			} `json:"trace"`
		} `json:"results"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	hidden, visible := map[string]bool{}, map[string]bool{}
	classes = map[string]string{}
	for _, r := range doc.Results {
		classes[r.Name] = r.LineClass
		for _, h := range r.Trace.Hops {
			set := visible
			if h.TTL <= n {
				set = hidden
			}
			for _, x := range h.Responders {
				set[x.Addr] = true
				if x.ASN > 0 {
					set["AS"+strconv.Itoa(x.ASN)] = true
				}
				if x.Carrier != "private" && x.Carrier != "documentation" && x.Carrier != "" {
					set[x.Carrier] = true
				}
				if h.TTL == n+1 && shown == "" {
					shown = x.Addr
				}
			}
		}
	}
	for s := range hidden {
		if !visible[s] {
			secrets = append(secrets, s)
		}
	}
	return secrets, classes, shown
}

func TestBacktraceHideHopsLeavesNoTraceOfTheHiddenHopsInAnyFormat(t *testing.T) {
	files, _ := filepath.Glob("../../samples/rec/*-backtrace.json")
	if len(files) < 2 {
		t.Fatalf("bundled backtraces: %v", files)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{2, 3} {
			secrets, classes, shown := backtraceSecrets(t, raw, n)
			if len(secrets) < n || shown == "" {
				t.Fatalf("%s: the first %d hops carry %v, TTL %d %q", file, n, secrets, n+1, shown)
			}
			var doc route.BacktraceDoc
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			masked := route.HideBacktraceHops(&doc, n)
			for _, f := range Formats {
				var b bytes.Buffer
				if err := Render(&b, BacktraceReport{Doc: masked}, f, Options{Width: 200}); err != nil {
					t.Fatal(err)
				}
				out := b.String()
				for _, s := range secrets {
					if strings.Contains(out, s) {
						t.Errorf("%s --hide-hops %d --format %s shows %q of a hidden hop:\n%s", file, n, f, s, out)
					}
				}
				// The JSON has every hop; the table one row per target,
				// whose AS path now begins at TTL 3.
				if n == 2 && f == FormatJSON && !strings.Contains(out, shown) || n == 2 && f != FormatJSON && !strings.Contains(out, "(ttl 3)") {
					t.Errorf("%s --hide-hops 2 --format %s: TTL 3 (%s) is missing:\n%s", file, f, shown, out)
				}
				says := map[Format]string{FormatTable: "hidden hops: TTL 1–" + strconv.Itoa(n), FormatMarkdown: "hidden hops: TTL 1–" + strconv.Itoa(n),
					FormatJSON: `"hidden_hops": ` + strconv.Itoa(n), FormatCSV: ",hidden_hops\n"}[f]
				if !strings.Contains(out, says) {
					t.Errorf("%s --format %s does not say the hops are hidden (%q):\n%s", file, f, says, out)
				}
			}
			for _, r := range masked.Results {
				if r.LineClass != classes[r.Name] {
					t.Errorf("%s: %s line class %q, recorded %q", file, r.Name, r.LineClass, classes[r.Name])
				}
			}
			if doc.HiddenHops != 0 || doc.Results[0].Trace.Hops[0].Responders[0].Addr == route.Hidden {
				t.Errorf("%s: masking changed the document it was given", file)
			}
		}
	}
}
