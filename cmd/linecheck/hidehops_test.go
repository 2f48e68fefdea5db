package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// recordedHop is a hop of a recording as the file has it, decoded here on
// its own so that the test does not trust the reader it checks.
type recordedHop struct {
	TTL        int `json:"ttl"`
	Responders []struct {
		Addr    string `json:"addr"`
		ASN     int    `json:"asn"`
		ASName  string `json:"as_name"`
		Carrier string `json:"carrier"`
		Country string `json:"country"`
	} `json:"responders"`
}

// hopSecrets returns what the hops at TTL 1..n of hops identify (addresses,
// AS numbers as "AS<n>" and as the JSON number, AS names, non-range
// carrier names) that no hop past n also carries, and one address of the
// first hop past n that only it carries.
func hopSecrets(t *testing.T, hops []recordedHop, n int) (secrets []string, shown string) {
	t.Helper()
	hidden, visible := map[string]bool{}, map[string]bool{}
	for _, h := range hops {
		set := visible
		if h.TTL <= n {
			set = hidden
		}
		for _, r := range h.Responders {
			for _, s := range []string{r.Addr, r.ASName} {
				if s != "" {
					set[s] = true
				}
			}
			switch r.Carrier {
			case "", "private", "cgnat", "documentation", "loopback", "link-local", "reserved":
			default:
				set[r.Carrier] = true
			}
			if r.ASN > 0 {
				set["AS"+strconv.Itoa(r.ASN)] = true
				set[`"asn": `+strconv.Itoa(r.ASN)] = true
			}
			if shown == "" && h.TTL == n+1 {
				shown = r.Addr
			}
		}
	}
	for s := range hidden {
		if !visible[s] {
			secrets = append(secrets, s)
		}
	}
	return secrets, shown
}

func TestTraceHideHopsMasksTheFirstHopsInEveryFormat(t *testing.T) {
	files, _ := filepath.Glob("../../samples/rec/*-forward.json")
	if len(files) < 4 {
		t.Fatalf("bundled forward routes: %v", files)
	}
	for _, file := range files {
		// The annotated hops (AS numbers and names come from the dataset,
		// not the file): the unmasked JSON, read as plain JSON.
		code, full, stderr := runLinecheckOut(t, "trace", "--replay", file, "--format", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", file, code, stderr)
		}
		var doc struct {
			LineClass string        `json:"line_class"`
			Hops      []recordedHop `json:"hops"`
		}
		if err := json.Unmarshal([]byte(full), &doc); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Hops []recordedHop `json:"hops"`
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{2, 4} {
			secrets, shown := hopSecrets(t, append(rec.Hops, doc.Hops...), n)
			if n == 2 && (len(secrets) < 2 || shown == "") {
				t.Fatalf("%s: the recording's first two hops carry %v, hop 3 %q", file, secrets, shown)
			}
			if n == 4 && !strings.Contains(strings.Join(secrets, " "), "AS4812") {
				t.Fatalf("%s: hops 3-4 are the Shanghai access network (AS4812) in every sample: %v", file, secrets)
			}
			for _, f := range []string{"table", "json", "csv", "markdown"} {
				args := []string{"trace", "--replay", file, "--format", f, "--hide-hops", strconv.Itoa(n)}
				outs := []string{}
				code, out, stderr := runLinecheckOut(t, args...)
				if code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, stderr)
				}
				outs = append(outs, out+stderr)
				if f == "csv" {
					code, out, stderr = runLinecheckOut(t, append(args, "--table", "route")...)
					if code != 0 {
						t.Fatalf("%v --table route: exit %d: %s", args, code, stderr)
					}
					outs = append(outs, out+stderr)
					if !strings.Contains(out, "hidden_hops") || !strings.HasSuffix(strings.TrimSpace(out), ","+strconv.Itoa(n)) {
						t.Errorf("%v --table route does not say hidden_hops %d:\n%s", args, n, out)
					}
				}
				all := strings.Join(outs, "\n")
				for _, s := range secrets {
					if strings.Contains(all, s) {
						t.Errorf("%v: the output shows %q of a hidden hop:\n%s", args, s, all)
					}
				}
				if n == 2 && !strings.Contains(all, shown) {
					t.Errorf("%v: hop 3's address %s is missing:\n%s", args, shown, all)
				}
				switch f {
				case "table", "markdown":
					if !strings.Contains(all, "hidden hops: TTL 1–"+strconv.Itoa(n)+" (--hide-hops "+strconv.Itoa(n)+")") {
						t.Errorf("%v: no line says the hops are hidden:\n%s", args, all)
					}
				case "json":
					var got struct {
						HiddenHops int                 `json:"hidden_hops"`
						LineClass  string              `json:"line_class"`
						ASPath     []struct{ TTL int } `json:"as_path"`
						Hops       []recordedHop       `json:"hops"`
					}
					if err := json.Unmarshal([]byte(out), &got); err != nil {
						t.Fatal(err)
					}
					if got.HiddenHops != n || got.LineClass != doc.LineClass || got.LineClass == "" || len(got.Hops) != len(doc.Hops) {
						t.Errorf("%v: hidden_hops %d, line class %q (unmasked %q), %d hops (unmasked %d)",
							args, got.HiddenHops, got.LineClass, doc.LineClass, len(got.Hops), len(doc.Hops))
					}
					for _, p := range got.ASPath {
						if p.TTL <= n {
							t.Errorf("%v: the AS path begins a network at hidden TTL %d", args, p.TTL)
						}
					}
					for _, h := range got.Hops[:n] {
						if len(h.Responders) == 0 || h.Responders[0].Addr != "hidden" {
							t.Errorf("%v: TTL %d reads %+v, want addr \"hidden\"", args, h.TTL, h.Responders)
						}
					}
				}
			}
		}
	}
}

func TestHideHopsOffLeavesTheTraceAsItWasAndNegativeExits2(t *testing.T) {
	file := "../../samples/rec/hk-cn2-gia-forward.json"
	_, plain, _ := runLinecheckOut(t, "trace", "--replay", file, "--format", "json")
	code, off, stderr := runLinecheckOut(t, "trace", "--replay", file, "--format", "json", "--hide-hops", "0")
	if code != 0 || off != plain || strings.Contains(off, "hidden") {
		t.Errorf("--hide-hops 0: exit %d, output differs from the default: %v %s", code, off != plain, stderr)
	}
	code, out, stderr := runLinecheckOut(t, "trace", "--replay", file, "--hide-hops", "-1")
	if code != 2 || out != "" || !strings.Contains(stderr, "--hide-hops -1") {
		t.Errorf("--hide-hops -1: exit %d, stdout %q, stderr %q; want exit 2 naming the flag", code, out, stderr)
	}
}
