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
	t.Parallel() // child processes on files of its own: see main_test.go
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

func TestCompareHideHopsMasksEveryRouteInEveryFormat(t *testing.T) {
	t.Parallel() // child processes on files of its own: see main_test.go
	// What the routes' first hops name: each recorded route as the unmasked
	// trace replay annotates it, the raw mtr files' hosts, and the backtrace
	// recordings' hops (hidden unless a later hop of any route carries it).
	var hops []recordedHop
	routes, _ := filepath.Glob("../../samples/rec/*-forward.json")
	returns, _ := filepath.Glob("../../samples/rec/*-return.mtr.json")
	for _, f := range append(routes, returns...) {
		code, out, stderr := runLinecheckOut(t, "trace", "--replay", f, "--format", "json")
		if code != 0 {
			t.Fatalf("%s: %s", f, stderr)
		}
		var doc struct{ Hops []recordedHop }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		hops = append(hops, doc.Hops...)
	}
	for _, f := range returns {
		raw, _ := os.ReadFile(f)
		var mtr struct {
			Report struct {
				Hubs []struct {
					Count json.Number `json:"count"`
					Host  string      `json:"host"`
				} `json:"hubs"`
			} `json:"report"`
		}
		if err := json.Unmarshal(raw, &mtr); err != nil {
			t.Fatal(err)
		}
		for _, h := range mtr.Report.Hubs {
			ttl, _ := strconv.Atoi(h.Count.String())
			if h.Host != "???" {
				hops = append(hops, recordedHop{TTL: ttl, Responders: []struct {
					Addr    string `json:"addr"`
					ASN     int    `json:"asn"`
					ASName  string `json:"as_name"`
					Carrier string `json:"carrier"`
					Country string `json:"country"`
				}{{Addr: h.Host}}})
			}
		}
	}
	backtraces, _ := filepath.Glob("../../samples/rec/*-backtrace.json")
	for _, f := range backtraces {
		raw, _ := os.ReadFile(f)
		var doc struct {
			Results []struct {
				Trace struct{ Hops []recordedHop } `json:"trace"`
			} `json:"results"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		for _, r := range doc.Results {
			hops = append(hops, r.Trace.Hops...)
		}
	}
	if len(routes) < 4 || len(returns) < 4 || len(backtraces) < 2 {
		t.Fatalf("bundled recordings: %v %v %v", routes, returns, backtraces)
	}
	candidates := "../../samples/candidates.yaml"
	code, plain, stderr := runLinecheckOut(t, "compare", "--offline", candidates, "--format", "json")
	if code != 0 && code != 1 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	classes := func(doc string) []string {
		var r struct {
			Candidates []struct {
				Name  string
				Route struct {
					LineClass    string `json:"line_class"`
					ForwardClass string `json:"forward_class"`
					ReturnClass  string `json:"return_class"`
				}
			}
		}
		if err := json.Unmarshal([]byte(doc), &r); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range r.Candidates {
			out = append(out, c.Name+":"+c.Route.LineClass+"/"+c.Route.ForwardClass+"/"+c.Route.ReturnClass)
		}
		return out
	}
	want := classes(plain)
	for _, n := range []int{2, 4} {
		secrets, _ := hopSecrets(t, hops, n)
		if len(secrets) < 4 {
			t.Fatalf("the first %d hops of the bundled routes carry only %v", n, secrets)
		}
		for _, f := range []string{"table", "json", "csv", "markdown", "html"} {
			args := []string{"compare", "--offline", candidates, "--format", f, "--wide", "--hide-hops", strconv.Itoa(n)}
			var outs []string
			tables := []string{""}
			if f == "csv" {
				tables = []string{"routes", "ranking", "checks", "targets"}
			}
			for _, tb := range tables {
				a := args
				if tb != "" {
					a = append(append([]string{}, args...), "--table", tb)
				}
				code, out, stderr := runLinecheckOut(t, a...)
				if code != 0 && code != 1 {
					t.Fatalf("%v: exit %d: %s", a, code, stderr)
				}
				outs = append(outs, out+stderr)
				if tb == "routes" && !strings.Contains(out, ",hidden_hops\n") {
					t.Errorf("%v: no hidden_hops column:\n%s", a, out)
				}
			}
			all := strings.Join(outs, "\n")
			for _, s := range secrets {
				if strings.Contains(all, s) {
					t.Errorf("%v shows %q of a hidden hop", args, s)
				}
			}
			says := map[string]string{"json": `"hidden_hops": ` + strconv.Itoa(n), "csv": "hidden_hops"}[f]
			if says == "" {
				says = "hidden hops: TTL 1–" + strconv.Itoa(n)
			}
			if !strings.Contains(all, says) {
				t.Errorf("%v does not say the hops are hidden (%q)", args, says)
			}
			// TTL 3 is the first shown hop: the forward AS paths begin there.
			begins := map[string]string{"json": `"ttl": 3`}[f]
			if begins == "" {
				begins = "(ttl 3)"
			}
			if n == 2 && !strings.Contains(all, begins) {
				t.Errorf("%v: no AS path begins at TTL 3:\n%s", args, all)
			}
			if f == "json" {
				if got := classes(outs[0]); strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("--hide-hops %d changed the line classes: %v, unmasked %v", n, got, want)
				}
			}
		}
	}
}
