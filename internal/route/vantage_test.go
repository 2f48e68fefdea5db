package route

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// oracleTrace is what testdata/vantage/oracle.py, a reader written from the
// formats' documentation with Python's json module alone, prints per trace.
type oracleTrace struct {
	Vantage *string `json:"vantage"`
	Hops    []struct {
		TTL        int `json:"ttl"`
		Sent       int `json:"sent"`
		Late       int `json:"late"`
		Dup        int `json:"dup"`
		Responders []struct {
			Addr string    `json:"addr"`
			RTTs []float64 `json:"rtts"`
		} `json:"responders"`
	} `json:"hops"`
}

// runOracle runs the Python oracle on path; the test is skipped, saying
// why, where python3 is missing.
func runOracle(t *testing.T, path string) []oracleTrace {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the readers are not checked against testdata/vantage/oracle.py")
	}
	out, err := exec.Command(py, "testdata/vantage/oracle.py", path).Output()
	if err != nil {
		t.Fatalf("oracle on %s: %v", path, err)
	}
	var o []oracleTrace
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("oracle output: %v", err)
	}
	return o
}

// checkAgainstOracle reads path with ReadTracesFile and compares every
// trace's vantage id, hops (TTL, probes sent, late and duplicate replies)
// and responders (address, replies, min/avg/max RTT) with the oracle's.
// It returns the traces.
func checkAgainstOracle(t *testing.T, path string) []*Trace {
	t.Helper()
	want := runOracle(t, path)
	got, err := ReadTracesFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d traces, oracle %d", path, len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if w.Vantage != nil && (g.Vantage == nil || g.Vantage.ID != *w.Vantage) {
			t.Errorf("%s trace %d: vantage %+v, oracle %s", path, i, g.Vantage, *w.Vantage)
		}
		if len(g.Hops) != len(w.Hops) {
			t.Errorf("%s trace %d: %d hops, oracle %d", path, i, len(g.Hops), len(w.Hops))
			continue
		}
		for j, wh := range w.Hops {
			gh := g.Hops[j]
			if gh.TTL != wh.TTL || gh.Sent != wh.Sent || gh.Late != wh.Late || gh.Duplicates != wh.Dup || len(gh.Responders) != len(wh.Responders) {
				t.Errorf("%s trace %d hop %d: ttl %d sent %d late %d dup %d, %d responders; oracle %+v",
					path, i, j, gh.TTL, gh.Sent, gh.Late, gh.Duplicates, len(gh.Responders), wh)
				continue
			}
			for k, wr := range wh.Responders {
				gr := gh.Responders[k]
				if gr.Addr != wr.Addr || gr.Recv != len(wr.RTTs) {
					t.Errorf("%s trace %d ttl %d: responder %s recv %d; oracle %s %d", path, i, gh.TTL, gr.Addr, gr.Recv, wr.Addr, len(wr.RTTs))
					continue
				}
				if len(wr.RTTs) == 0 {
					continue
				}
				lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
				for _, x := range wr.RTTs {
					lo, hi, sum = math.Min(lo, x), math.Max(hi, x), sum+x
				}
				avg := sum / float64(len(wr.RTTs))
				if math.Abs(gr.RTT.Min-lo) > 1e-9 || math.Abs(gr.RTT.Max-hi) > 1e-9 || math.Abs(gr.RTT.Avg-avg) > 1e-9 {
					t.Errorf("%s trace %d ttl %d %s: rtt %v/%v/%v; oracle %v/%v/%v", path, i, gh.TTL, gr.Addr, gr.RTT.Min, gr.RTT.Avg, gr.RTT.Max, lo, avg, hi)
				}
			}
		}
	}
	return got
}

// The real files collected for this work (public test fixtures and
// published measurements; not in the repository, their licences differ)
// are read to the oracle's hops and RTTs when LINECHECK_VANTAGE_FILES
// names their folder.
func TestVantageFormatsReferenceFiles(t *testing.T) {
	dir := os.Getenv("LINECHECK_VANTAGE_FILES")
	if dir == "" {
		t.Skip("LINECHECK_VANTAGE_FILES not set: the collected real files are not read")
	}
	var files []string
	for _, pat := range []string{"atlas/*.json", "atlas/error/*.json", "atlas/multi/*.json", "atlas/multi/*.jsonl", "globalping/*.json", "globalping/multi/*.json", "nexttrace/*.json"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no files under %s", dir)
	}
	traces := 0
	for _, f := range files {
		traces += len(checkAgainstOracle(t, f))
	}
	t.Logf("%d files, %d traces read as the oracle reads them", len(files), traces)
}

// A multi-vantage file is refused where one trace is wanted, naming the
// vantages; SelectVantages picks one by id, AS, carrier or city.
func TestMultiVantageFile(t *testing.T) {
	_, err := ReadTraceFile("testdata/vantage/atlas-three-probes.json")
	if err == nil || !strings.Contains(err.Error(), "3 vantages (1001, 1002, 1003)") {
		t.Fatalf("ReadTraceFile: %v", err)
	}
	ts, err := ReadTracesFile("testdata/vantage/globalping-mtr-two.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		Annotate(tr, nil)
	}
	for sel, want := range map[string]string{"2": "Beijing", "AS4134": "Shanghai", "4837": "Beijing", "shanghai": "Shanghai", "ChinaNet": "Shanghai", "telecom": "Shanghai", "UNICOM": "Beijing"} {
		got := SelectVantages(ts, sel)
		if len(got) != 1 || got[0].Vantage.City != want {
			t.Errorf("--vantage %s: %d traces %v, want %s", sel, len(got), VantageIDs(got), want)
		}
	}
	if got := SelectVantages(ts, "9"); len(got) != 0 {
		t.Errorf("--vantage 9 matched %s", VantageIDs(got))
	}
}

// A vantage without an AS in its file is named from the IP-to-AS data, as
// hops are: the public ("from") address of a probe behind NAT.
func TestVantageASFromIPToASData(t *testing.T) {
	db, err := LoadASNDB("testdata/ip2asn-combined.tsv")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := ReadTracesFile("testdata/vantage/atlas-three-probes.json")
	if err != nil {
		t.Fatal(err)
	}
	// ip2asn-combined.tsv: 101.80.0.0-101.95.255.255 AS4812, 112.64.0.0-112.67.255.255 AS17621.
	for i, want := range []struct {
		asn     int
		carrier string
	}{{4812, CarrierTelecom}, {17621, CarrierUnicom}, {4812, CarrierTelecom}} {
		Annotate(ts[i], db)
		if v := ts[i].Vantage; v.ASN != want.asn || v.Carrier == "" || v.UserCarrier != want.carrier {
			t.Errorf("vantage %d: %+v, want AS%d (%s) with a carrier", i, v, want.asn, want.carrier)
		}
	}
	if got := SelectVantages(ts, "unicom"); len(got) != 1 || got[0].Vantage.ID != "1002" {
		t.Errorf("--vantage unicom: %s", VantageIDs(got))
	}
	if v := ts[1].Vantage; v.Addr != "192.168.1.10" || v.PublicAddr != "112.64.3.4" {
		t.Errorf("NAT vantage %+v", v)
	}
}

// A multi-vantage forward recording fills the per-carrier forward class for
// every carrier with a vantage: the Shanghai probe (AS4134) crosses
// 202.97.12.1, a ChinaNet backbone address of the bundled table, so
// chinanet-163 for telecom users; the Beijing probe (AS4837) crosses
// 219.158.3.1, Unicom's 4837 backbone, so cu-4837 for unicom users; no
// mobile vantage, so no forward class for mobile users. A telecom user in
// Hangzhou takes the nearest telecom vantage, Shanghai, with a note.
func TestUserRoutesFromVantages(t *testing.T) {
	ts, err := ReadTracesFile("testdata/vantage/globalping-mtr-two.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		Annotate(tr, nil)
	}
	users := []User{{City: "Shanghai", Carrier: CarrierTelecom}, {City: "Beijing", Carrier: CarrierUnicom},
		{City: "Guangzhou", Carrier: CarrierMobile}, {City: "Hangzhou", Carrier: CarrierTelecom}}
	allowed := map[string][]string{CarrierTelecom: {"cn2-gia"}, CarrierUnicom: {"cu-4837"}}
	rs := UserRoutes(users, nil, nil, "", ts, allowed)
	want := []string{"chinanet-163", "cu-4837", "", "chinanet-163"}
	for i, r := range rs {
		if r.Forward != want[i] {
			t.Errorf("%s %s: forward %q, want %q", r.Carrier, r.City, r.Forward, want[i])
		}
	}
	if rs[0].Pass == nil || *rs[0].Pass || rs[1].Pass == nil || !*rs[1].Pass {
		t.Errorf("line_classes_by_carrier on the forward class: telecom %v, unicom %v", rs[0].Pass, rs[1].Pass)
	}
	if n := strings.Join(rs[3].Notes, "; "); !strings.Contains(n, "forward measured from globalping result 1") {
		t.Errorf("Hangzhou notes: %s", n)
	}
	if v, ok := NearestVantage(ts, CarrierMobile, "Guangzhou"); ok {
		t.Errorf("a mobile vantage found: %+v", v.Vantage)
	}
}

// Any bytes given to the measurement networks' readers are traces or an
// error naming the file, never a panic; the traces annotate.
func FuzzReadTraces(f *testing.F) {
	for _, p := range []string{"atlas-three-probes.json", "atlas-one-v6.json", "globalping-mtr-two.json", "globalping-traceroute.json", "nexttrace.json"} {
		b, err := os.ReadFile("testdata/vantage/" + p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`[{"type":"traceroute","prb_id":1,"result":[{"hop":1,"result":[{"late":1}]}]}]`))
	f.Add([]byte(`{"type":"mtr","results":[{"result":{"hops":[null]}}]}`))
	f.Add([]byte(`{"Hops":[[],[{"TTL":1,"Success":true,"Address":null}]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ReadTraces(strings.NewReader(string(data)), "fuzz.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.json") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if len(ts) == 0 {
			t.Fatal("no trace and no error")
		}
		for _, tr := range ts {
			Annotate(tr, nil)
			for _, h := range tr.Hops {
				if h.Loss < 0 || h.Loss > 1 {
					t.Fatalf("loss %g", h.Loss)
				}
			}
		}
	})
}
