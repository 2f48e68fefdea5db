package route

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/linecheck/linecheck/internal/readlimit"
	"io"
	"math"
	"net/netip"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/internal/geo"
	"github.com/linecheck/linecheck/internal/jsonmsg"
	"github.com/linecheck/linecheck/probe"
	"github.com/linecheck/linecheck/yamlmsg"
)

// BacktraceSchema is the schema name of a backtrace document.
const BacktraceSchema = "linecheck.backtrace/v1"

// User carriers a backtrace target (and a candidate's users) can belong to.
const (
	CarrierTelecom = "telecom"
	CarrierUnicom  = "unicom"
	CarrierMobile  = "mobile"
	CarrierOther   = "other"
)

// UserCarriers are the carrier values a target or user may name, in report order.
var UserCarriers = []string{CarrierTelecom, CarrierUnicom, CarrierMobile, CarrierOther}

// BacktraceTarget is one endpoint a backtrace traces toward.
type BacktraceTarget struct {
	Name    string `yaml:"name" json:"name"`
	Carrier string `yaml:"carrier" json:"carrier"` // telecom, unicom, mobile or other
	City    string `yaml:"city" json:"city"`
	Addr    string `yaml:"addr" json:"addr"` // an IP address
	// Source is where the address is publicly listed (bundled set only).
	Source string `yaml:"source,omitempty" json:"source,omitempty"`
}

//go:embed data/backtrace-targets.yaml
var bundledTargetsYAML []byte

// BundledTargets is the bundled target set (data only: listed by
// `backtrace --list`, never probed by linecheck's own tests).
func BundledTargets() []BacktraceTarget {
	ts, err := ParseTargets("internal/route/data/backtrace-targets.yaml", bundledTargetsYAML, true)
	if err != nil {
		// Embedded and checked by a test; a broken build is a bug.
		panic(err)
	}
	return ts
}

// LoadTargets reads a --targets FILE: YAML `targets: [{name, carrier, city, addr}]`.
func LoadTargets(path string) ([]BacktraceTarget, error) {
	b, err := readlimit.ReadFile(path, readlimit.Document)
	if err != nil {
		return nil, fmt.Errorf("--targets: %w", err)
	}
	return ParseTargets(path, b, false)
}

// ParseTargets parses a target list; errors say name:line, the field and
// what to write. needSource requires the source field (the bundled set).
func ParseTargets(name string, data []byte, needSource bool) ([]BacktraceTarget, error) {
	var doc struct {
		Targets []yaml.Node `yaml:"targets"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file: want `targets: [{name, carrier, city, addr}]`", name)
		}
		return nil, yamlmsg.FileError(name, err)
	}
	if len(doc.Targets) == 0 {
		return nil, fmt.Errorf("%s: no targets: want `targets: [{name, carrier, city, addr}]`", name)
	}
	var out []BacktraceTarget
	seen := map[string]int{}
	seenAddr := map[string]string{}
	for _, n := range doc.Targets {
		var t BacktraceTarget
		if err := n.Decode(&t); err != nil {
			return nil, yamlmsg.FileError(name, err)
		}
		for _, k := range fieldsOf(&n) {
			switch k {
			case "name", "carrier", "city", "addr", "source":
			default:
				return nil, fmt.Errorf("%s:%d: unknown field %q in a target: use name, carrier, city, addr", name, n.Line, k)
			}
		}
		where := fmt.Sprintf("%s:%d: target %q", name, n.Line, t.Name)
		if strings.TrimSpace(t.Name) == "" {
			return nil, fmt.Errorf("%s:%d: target without a name: every target needs name, carrier, city, addr", name, n.Line)
		}
		if l, dup := seen[t.Name]; dup {
			return nil, fmt.Errorf("%s: name used twice (first at line %d): names must be unique", where, l)
		}
		seen[t.Name] = n.Line
		if !validUserCarrier(t.Carrier) {
			return nil, fmt.Errorf("%s: carrier %q: use telecom, unicom, mobile or other", where, t.Carrier)
		}
		if strings.TrimSpace(t.City) == "" {
			return nil, fmt.Errorf("%s: no city: name the city the address sits in (e.g. Shanghai)", where)
		}
		a, err := netip.ParseAddr(t.Addr)
		if err != nil {
			return nil, fmt.Errorf("%s: addr %q is not an IP address (names are not resolved for target lists)", where, t.Addr)
		}
		t.Addr = a.String()
		if prev, dup := seenAddr[t.Addr]; dup {
			return nil, fmt.Errorf("%s: addr %s already used by target %q: each address is traced once", where, t.Addr, prev)
		}
		seenAddr[t.Addr] = t.Name
		if needSource && strings.TrimSpace(t.Source) == "" {
			return nil, fmt.Errorf("%s: no source: every bundled address names its public source", where)
		}
		out = append(out, t)
	}
	return out, nil
}

func fieldsOf(n *yaml.Node) []string {
	var ks []string
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		ks = append(ks, n.Content[i].Value)
	}
	return ks
}

func validUserCarrier(c string) bool {
	for _, u := range UserCarriers {
		if c == u {
			return true
		}
	}
	return false
}

// BacktraceDoc is the linecheck.backtrace/v1 document.
type BacktraceDoc struct {
	Schema string `json:"schema"`
	// Vantage names the server the traces ran from (--vantage, else the host name).
	Vantage string `json:"vantage"`
	// ASNData names the IP-to-AS dataset the hops were named from; absent
	// with --no-asn or in recordings made before it.
	ASNData *ASNData `json:"asn_data,omitempty"`
	// HiddenHops is N when the hops at TTL 1..N of every trace are masked
	// (--hide-hops N, HopMask.Backtrace); absent when nothing is masked.
	HiddenHops int `json:"hidden_hops,omitempty"`
	// Partial is true when Ctrl-C cut the run: targets not traced by then
	// say so in their rule (as trace's and ping's "partial"); absent
	// otherwise.
	Partial bool              `json:"partial,omitempty"`
	Results []BacktraceResult `json:"results"`
}

// BacktraceResult is one target's classified route.
type BacktraceResult struct {
	Name       string `json:"name"`
	Carrier    string `json:"carrier"`
	City       string `json:"city"`
	Addr       string `json:"addr"`
	Reached    bool   `json:"reached"`
	LineClass  string `json:"line_class"`
	Confidence string `json:"confidence"`
	Rule       string `json:"rule"`
	// RTT is the destination's RTT statistics (null figures when it never answered).
	RTT DestRTT `json:"rtt_ms"`
	// Loss is the destination's loss (0..1), null when it never answered.
	Loss  *float64 `json:"loss"`
	Trace *Trace   `json:"trace"`
}

// DestRTT are the RTT figures to the destination, in ms; nil is "no data".
type DestRTT struct {
	Min *float64 `json:"min"`
	Avg *float64 `json:"avg"`
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
	Max *float64 `json:"max"`
}

// BacktraceOf is the result of tracing target t: run classified and its
// hops named from db (Annotate), without the RTT samples unless samples;
// run is nil when t could not be traced at all, err saying why.
func BacktraceOf(t BacktraceTarget, run *probe.TraceRun, err error, db ASNDB, samples bool) BacktraceResult {
	var tr *Trace
	if run != nil {
		tr = BuildTrace(run)
		Annotate(tr, db)
		if !samples {
			for h := range tr.Hops {
				for j := range tr.Hops[h].Responders {
					tr.Hops[h].Responders[j].Samples = nil
				}
			}
		}
	}
	why := ""
	if err != nil {
		why = err.Error()
	}
	return NewBacktraceResult(t, tr, why)
}

// NewBacktraceResult fills a result from an annotated trace (Annotate) of
// target t; tr may be nil when the target could not be traced at all (why
// says why).
func NewBacktraceResult(t BacktraceTarget, tr *Trace, why string) BacktraceResult {
	r := BacktraceResult{Name: t.Name, Carrier: t.Carrier, City: t.City, Addr: t.Addr,
		LineClass: LineUnknown, Confidence: ConfidenceLow, Trace: tr}
	if tr == nil {
		r.Rule = "not traced: " + why
		return r
	}
	r.Reached = tr.Reached
	if tr.LineClass != "" {
		r.LineClass = tr.LineClass
	}
	if ev := tr.LineEvidence; ev != nil {
		r.Confidence, r.Rule = ev.Confidence, ev.Rule
	}
	if !tr.Reached || len(tr.Hops) == 0 {
		return r
	}
	h := tr.Hops[len(tr.Hops)-1]
	var resp *Responder
	for i := range h.Responders {
		if h.Responders[i].Addr == tr.Addr {
			resp = &h.Responders[i]
		}
	}
	if resp == nil && len(h.Responders) > 0 {
		resp = &h.Responders[0]
	}
	if resp == nil || resp.Recv == 0 {
		return r
	}
	loss := h.Loss
	r.Loss = &loss
	k := KnownFigures(tr, *resp)
	f := func(v float64) *float64 { return &v }
	r.RTT.Min, r.RTT.Avg, r.RTT.Max = f(resp.RTT.Min), f(resp.RTT.Avg), f(resp.RTT.Max)
	if k.Percentiles {
		r.RTT.P50, r.RTT.P95 = f(resp.RTT.P50), f(resp.RTT.P95)
	}
	return r
}

// EvidencePhrase words a result's evidence in one phrase: the evidence hops
// per carrier in route order and the landing network, e.g.
// "CN2 ×5, lands on ChinaNet Shanghai".
func (r BacktraceResult) EvidencePhrase() string {
	if r.Trace == nil {
		return r.Rule
	}
	p := EvidencePhrase(r.Trace.LineEvidence)
	if r.Reached && strings.HasSuffix(p, "landing not seen") {
		// No table or ASN file maps the delivery hops, but the target of the
		// list answered: say where the route ended, in the list's words.
		p = strings.TrimSuffix(p, "landing not seen") + fmt.Sprintf("ends at the %s target in %s (its network not mapped)", r.Carrier, r.City)
	}
	return p
}

// EvidencePhrase is BacktraceResult.EvidencePhrase for any evidence.
func EvidencePhrase(ev *LineEvidence) string {
	if ev == nil {
		return "no evidence"
	}
	var order []string
	ttls := map[string]map[int]bool{}
	for _, h := range ev.Hops {
		if ttls[h.Carrier] == nil {
			ttls[h.Carrier] = map[int]bool{}
			order = append(order, h.Carrier)
		}
		ttls[h.Carrier][h.TTL] = true
	}
	var parts []string
	for _, c := range order {
		parts = append(parts, fmt.Sprintf("%s ×%d", c, len(ttls[c])))
	}
	if len(parts) == 0 {
		parts = append(parts, "no carrier hops")
	}
	if ev.Landing != "" {
		parts = append(parts, "lands on "+ev.Landing)
	} else {
		parts = append(parts, "landing not seen")
	}
	return strings.Join(parts, ", ")
}

// ReadBacktraceFile reads a linecheck.backtrace/v1 document.
func ReadBacktraceFile(path string) (*BacktraceDoc, error) {
	b, err := readlimit.ReadFile(path, readlimit.Document)
	if err != nil {
		return nil, err
	}
	return ParseBacktrace(path, b)
}

// ParseBacktrace parses a linecheck.backtrace/v1 document.
func ParseBacktrace(name string, b []byte) (*BacktraceDoc, error) {
	var d BacktraceDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: not a backtrace JSON document: %w", name, jsonmsg.Describe(b, err))
	}
	if d.Schema != BacktraceSchema {
		return nil, fmt.Errorf("%s: schema %q, want %q (the output of `linecheck backtrace --format json`)", name, d.Schema, BacktraceSchema)
	}
	for i, r := range d.Results {
		if !validUserCarrier(r.Carrier) {
			return nil, fmt.Errorf("%s: results[%d] (%q): carrier %q: want telecom, unicom, mobile or other", name, i, r.Name, r.Carrier)
		}
	}
	return &d, nil
}

// MatchUser picks the result for a user of carrier in city: same carrier,
// nearest city (great-circle distance when both cities are known, an exact
// name match first); ok is false when no result has that carrier.
func (d *BacktraceDoc) MatchUser(carrier, city string) (BacktraceResult, bool) {
	var cands []BacktraceResult
	for _, r := range d.Results {
		if r.Carrier == carrier {
			cands = append(cands, r)
		}
	}
	if len(cands) == 0 {
		return BacktraceResult{}, false
	}
	uc, uok := geo.City(city)
	dist := func(r BacktraceResult) float64 {
		if strings.EqualFold(strings.TrimSpace(r.City), strings.TrimSpace(city)) {
			return -1
		}
		rc, rok := geo.City(r.City)
		if uok && rok {
			if rc.Name == uc.Name {
				return -1
			}
			return geo.GreatCircleKm(uc, rc)
		}
		return math.Inf(1)
	}
	sort.SliceStable(cands, func(a, b int) bool { return dist(cands[a]) < dist(cands[b]) })
	return cands[0], true
}

// ReadReturnFile reads a return recording: a linecheck.backtrace/v1 document
// (one classified route per target; doc set) or a single trace (our JSON or
// `mtr --json`; tr set, not yet annotated).
func ReadReturnFile(path string) (tr *Trace, doc *BacktraceDoc, err error) {
	b, err := readlimit.ReadFile(path, readlimit.Document)
	if err != nil {
		return nil, nil, err
	}
	var probe struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(b, &probe) == nil && probe.Schema == BacktraceSchema {
		doc, err := ParseBacktrace(path, b)
		return nil, doc, err
	}
	tr, err = ReadTrace(bytes.NewReader(b), path)
	return tr, nil, err
}

// Reclassify annotates every result's trace with db (which may be nil) and
// updates the result's class, confidence and rule: a recording made with
// another table or ASN file reads with the current ones.
func (d *BacktraceDoc) Reclassify(db ASNDB) {
	for i := range d.Results {
		r := &d.Results[i]
		if r.Trace == nil {
			continue
		}
		Annotate(r.Trace, db)
		r.LineClass = r.Trace.LineClass
		if ev := r.Trace.LineEvidence; ev != nil {
			r.Confidence, r.Rule = ev.Confidence, ev.Rule
		}
	}
}
