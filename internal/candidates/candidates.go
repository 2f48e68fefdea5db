package candidates

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/gpu"
	"github.com/linecheck/linecheck/internal/host"
	"github.com/linecheck/linecheck/internal/interconnect"
	"github.com/linecheck/linecheck/probe"
	"github.com/linecheck/linecheck/yamlmsg"
)

// File is a parsed and validated candidates file. The same file drives
// compare, tui and serve (serve needs only candidate names and targets).
// Paths in it are resolved against the directory of the YAML file.
type File struct {
	// Path is the YAML file as given; Dir the directory relative paths resolve against.
	Path string
	Dir  string
	// Vantage is where live probes run from (stretch is computed from it).
	Vantage Place
	// Users are the users' locations, with the carrier they are on when
	// given (`users: [{city, carrier}]`): the per-carrier route view and
	// sla.line_classes_by_carrier use it.
	Users      []Place
	Candidates []Candidate
	// Offers is the resolved path of the offers file (as `bill --offers`).
	Offers  string
	Traffic Traffic
	FX      FX
	SLA     SLA
	// RecordedOnly (YAML `recorded_only: true`) forbids live probing: the
	// targets are illustrative (the bundled samples) and only the recordings
	// may be used.
	RecordedOnly bool
	// HorizonMonths (YAML horizon_months) prices every offer over that many
	// months of 730 hours and ranks by the horizon's total (0: one month).
	HorizonMonths int
	// Warnings are what the file was accepted despite, each with its file
	// and line (a key under its old name): the commands print them to
	// stderr.
	Warnings []string
}

// Place is a city from the embedded table or explicit coordinates.
type Place struct {
	City string `json:"city,omitempty"`
	// Carrier is telecom, unicom, mobile or other (users and vantage); "" when not given.
	Carrier string   `json:"carrier,omitempty"`
	Lat     *float64 `json:"lat,omitempty"`
	Lon     *float64 `json:"lon,omitempty"`
	// Line is the YAML line the place was written on, for messages.
	Line int `json:"-"`
}

// String names the place: its city, else its coordinates.
func (p Place) String() string {
	if p.City != "" {
		return p.City
	}
	if p.Lat != nil && p.Lon != nil {
		return fmt.Sprintf("%.2f,%.2f", *p.Lat, *p.Lon)
	}
	return ""
}

// Candidate is one server/line under evaluation.
type Candidate struct {
	Name     string
	Provider string
	Region   Place
	Targets  []Target
	Recorded Recorded
	// Offer names an offer of the offers file.
	Offer string
	// WhatIf names further offers (other billing schemes of the same
	// provider) priced for the same traffic, for comparison only.
	WhatIf []string
	// BandwidthTest is the candidate's iperf3 server (`bandwidth_test:
	// {addr, port}`); nil when the candidate declares none.
	BandwidthTest *BandwidthTest
	// GPU is the candidate's gpu: block, what the order says of the machine
	// (nil when it has none); checked on recorded.gpu.
	GPU *gpu.Contract
	// Host is the candidate's host: block (delivery form and inventory the
	// order names; nil when it has none); checked on recorded.trial.
	Host *host.Contract
	// Interconnect is the candidate's interconnect: block (all-reduce bus
	// bandwidth, InfiniBand ports and rate; nil when it has none); checked
	// on recorded.trial's interconnect/.
	Interconnect *interconnect.Contract
	// Multipath (`multipath: true`) traces the forward route with
	// multipath discovery (trace --multipath) and judges sla.line_classes
	// on every path found (compare --multipath sets it for all).
	Multipath bool
	Line      int
}

// Target is one probe target of a candidate.
type Target struct {
	Addr     string         `json:"addr"`
	Protocol probe.Protocol `json:"protocol"` // icmp or tcp
	Port     int            `json:"port,omitempty"`
}

// String is addr for ICMP and addr:port/tcp for TCP.
func (t Target) String() string {
	if t.Protocol == probe.TCP {
		return fmt.Sprintf("%s tcp/%d", t.Addr, t.Port)
	}
	return t.Addr + " icmp"
}

// RouteTarget is the target whose forward route a live run traces first:
// the first of RouteTargets (the candidate's first target).
func (c *Candidate) RouteTarget() (Target, bool) {
	ts := c.RouteTargets()
	if len(ts) == 0 {
		return Target{}, false
	}
	return ts[0], true
}

// RouteTargets are the targets whose forward routes a live run traces (the
// one-shot run, the TUI's trace loops, serve's traces): the first target of
// each address family, in the order the families first appear (issue 32: a
// dual-stack server's IPv6 route often rides another line than its IPv4
// one). A host name counts as the first target's family. The one place
// that choice is made.
func (c *Candidate) RouteTargets() []Target {
	var out []Target
	seen := map[string]bool{}
	for i, t := range c.Targets {
		fam := AddrFamily(t.Addr)
		if fam == "" && i > 0 {
			continue
		}
		if !seen[fam] {
			seen[fam] = true
			out = append(out, t)
		}
	}
	return out
}

// Families are the address families of the candidate's targets given as
// addresses, in the order they first appear.
func (c *Candidate) Families() []string {
	var out []string
	for _, t := range c.Targets {
		if fam := AddrFamily(t.Addr); fam != "" && !slices.Contains(out, fam) {
			out = append(out, fam)
		}
	}
	return out
}

// Address families (sla.families, the family key of the verdict's windows).
const (
	IPv4 = "ipv4"
	IPv6 = "ipv6"
)

// AddrFamily is the address family of addr: IPv4 for an IPv4 address (an
// IPv4-mapped IPv6 one too, as the kernel sends it), IPv6 for an IPv6
// address, "" for anything else (a host name).
func AddrFamily(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return ""
	}
	if a.Unmap().Is4() {
		return IPv4
	}
	return IPv6
}

// Recorded holds the resolved paths of a candidate's recordings; empty when absent.
type Recorded struct {
	// Forward is a trace from the vantage towards the server (our JSON, mtr
	// --json, or a file of several vantages: RIPE Atlas, Globalping,
	// NextTrace): the first of ForwardFiles.
	Forward string
	// Return is a trace from the server back towards the users: the first
	// of ReturnFiles.
	Return string
	// ForwardFiles and ReturnFiles are every file recorded.forward and
	// recorded.return name, as ProbeFiles: traces taken over the days of a
	// trial, or a `trace --watch` journal (issue 30).
	ForwardFiles, ReturnFiles []string
	// Probes is a per-probe NDJSON stream in the `ping --stream` format:
	// the first of ProbeFiles.
	Probes string
	// ProbeFiles are every stream recorded.probes names, in order: a
	// file, a list of them, or glob patterns (the days of a trial, issue
	// 30), each pattern's files in name order.
	ProbeFiles []string
	// BW is a throughput test: `bw --format json`, or a `bw --watch` journal.
	BW string
	// GPU is a directory of saved nvidia-smi outputs (what `gpu --from` reads).
	GPU string
	// Trial is a `linecheck trial` bundle: its gpu/ stands as GPU, its
	// line/backtrace.json as Return and line/bw.journal as BW, its
	// host.json is checked against the host: block.
	Trial string
}

// Traffic is the users' traffic profile: a log, or a synthetic month.
type Traffic struct {
	// Log is the resolved path of a traffic log (any format `bill` reads).
	Log string
	// MonthlyGB, PeakMbps and Shape describe a synthetic month when Log is empty.
	MonthlyGB float64
	PeakMbps  float64
	Shape     string
	// Period optionally fixes the month billed (YYYY-MM); default: the last
	// month of the log with data, or the month before Options.Now for a synthetic profile.
	Period string
	// TZ is the time zone of the billing month (default UTC).
	TZ string
}

// FX is billing's one exchange model: a candidates file's fx: is read into
// it, as an offers file's compare_currency and exchange_rates are.
type FX = billing.FX

// SLA holds the thresholds every candidate is checked against; a nil
// pointer or empty list means "not required". Its JSON is how the
// compare document restates them (null = not required).
type SLA struct {
	RTTP95ms    *float64 `json:"rtt_p95_ms"`
	Loss        *float64 `json:"loss"`
	JitterMs    *float64 `json:"jitter_ms"`
	LineClasses []string `json:"line_classes"`
	// LineClassesByCarrier (`sla.line_classes_by_carrier: {telecom: [cn2-gia], …}`)
	// lists the classes allowed toward the users of each carrier, checked in
	// both directions where measured.
	LineClassesByCarrier map[string][]string `json:"line_classes_by_carrier,omitempty"`
	MaxStretch           *float64            `json:"max_stretch"`
	// MinThroughputMbps is checked on the p5 of the throughput test's
	// interval rates (download); MaxOversell on a bw journal's
	// 1 − worst-hour p50 / best-hour p50.
	MinThroughputMbps *float64 `json:"min_throughput_mbps"`
	MaxOversell       *float64 `json:"max_oversell"`
	// MinPathMTU (`sla.min_path_mtu`, bytes) is checked on the forward
	// route's path MTU: a live run searches it (probe.PathMTU) when set, a
	// recording has it when traced with trace --mtu.
	MinPathMTU *int `json:"min_path_mtu,omitempty"`
	// Families (`sla.families: [ipv4, ipv6]`) are the address families
	// that must each pass the checks on their own route (issue 32); a
	// family without data fails with no data. Empty: the candidate is
	// judged over all its targets at once, as before.
	Families []string `json:"families,omitempty"`
	// Windows are the named spans of the users' day every measured check
	// is judged over besides the whole recording (sla.windows, issue 30),
	// in name order; the evening default is not among them (Evening).
	Windows []Window `json:"-"`
	// WindowsOff is `windows: {}`: no window, not even the evening default.
	WindowsOff bool `json:"-"`
	// Zone is the users' time zone: sla.tz, else the first user's city's,
	// else the vantage's; nil when none is known. ZoneFrom says which.
	Zone     *time.Location `json:"-"`
	ZoneFrom string         `json:"-"`
}

// Line classes the route analysis can give (docs/route.md, Line classification).
var LineClasses = []string{"cn2-gia", "cn2-gt", "chinanet-163", "cu-9929", "cu-4837", "cmin2", "cmi", "transit", "unknown"}

// yaml model: the raw document, decoded with KnownFields so that a typo in
// a key is an error with its line.
type rawFile struct {
	Vantage      rawPlace       `yaml:"vantage"`
	Users        []rawPlace     `yaml:"users"`
	Candidates   []rawCandidate `yaml:"candidates"`
	Offers       string         `yaml:"offers"`
	Traffic      *rawTraffic    `yaml:"traffic"`
	FX           yaml.Node      `yaml:"fx"`
	SLA          *rawSLA        `yaml:"sla"`
	RecordedOnly bool           `yaml:"recorded_only"`
	Offline      bool           `yaml:"offline"`
	Horizon      *int           `yaml:"horizon_months"`
}

type rawPlace struct {
	City    string   `yaml:"city"`
	Carrier string   `yaml:"carrier"`
	Lat     *float64 `yaml:"lat"`
	Lon     *float64 `yaml:"lon"`
	line    int
}

func (p *rawPlace) UnmarshalYAML(n *yaml.Node) error {
	type plain rawPlace
	var v plain
	if n.Kind == yaml.ScalarNode {
		// `region: Hong Kong` is accepted as a city name.
		v.City = n.Value
	} else if err := yamlmsg.DecodeStrict(n, &v); err != nil {
		return err
	}
	*p = rawPlace(v)
	p.line = n.Line
	return nil
}

type rawCandidate struct {
	Name      string      `yaml:"name"`
	Provider  string      `yaml:"provider"`
	Region    rawPlace    `yaml:"region"`
	Targets   []rawTarget `yaml:"targets"`
	Recorded  rawRecorded `yaml:"recorded"`
	Offer     string      `yaml:"offer"`
	WhatIf    []string    `yaml:"what_if"`
	BWTest    *rawBWTest  `yaml:"bandwidth_test"`
	GPU       yaml.Node   `yaml:"gpu"`
	Host      yaml.Node   `yaml:"host"`
	Interconn yaml.Node   `yaml:"interconnect"`
	Multipath bool        `yaml:"multipath"`
	line      int
}

type rawBWTest struct {
	Addr string `yaml:"addr"`
	Port int    `yaml:"port"`
	line int
}

func (t *rawBWTest) UnmarshalYAML(n *yaml.Node) error {
	type plain rawBWTest
	return yamlmsg.DecodeLined(n, (*plain)(t), &t.line)
}

func (c *rawCandidate) UnmarshalYAML(n *yaml.Node) error {
	type plain rawCandidate
	return yamlmsg.DecodeLined(n, (*plain)(c), &c.line)
}

type rawRecorded struct {
	Forward pathList `yaml:"forward"`
	Return  pathList `yaml:"return"`
	Probes  pathList `yaml:"probes"`
	BW      string   `yaml:"bw"`
	GPU     string   `yaml:"gpu"`
	Trial   string   `yaml:"trial"`
}

func (r *rawRecorded) UnmarshalYAML(n *yaml.Node) error {
	type plain rawRecorded
	return yamlmsg.DecodeStrict(n, (*plain)(r))
}

type rawTarget struct {
	Addr     string `yaml:"addr"`
	Protocol string `yaml:"protocol"`
	Port     int    `yaml:"port"`
	line     int
}

func (t *rawTarget) UnmarshalYAML(n *yaml.Node) error {
	type plain rawTarget
	return yamlmsg.DecodeLined(n, (*plain)(t), &t.line)
}

type rawTraffic struct {
	Log       string   `yaml:"log"`
	MonthlyGB *float64 `yaml:"monthly_gb"`
	PeakMbps  *float64 `yaml:"peak_mbps"`
	Shape     string   `yaml:"shape"`
	Period    string   `yaml:"period"`
	TZ        string   `yaml:"tz"`
	line      int
}

func (t *rawTraffic) UnmarshalYAML(n *yaml.Node) error {
	type plain rawTraffic
	return yamlmsg.DecodeLined(n, (*plain)(t), &t.line)
}

type rawSLA struct {
	RTTP95ms *float64 `yaml:"rtt_p95_ms"`
	Loss     *float64 `yaml:"loss"`
	Jitter   *float64 `yaml:"jitter_ms"`
	// JitterOld is jitter_ms under its old name, read with a warning: the
	// figure was always the mean |D|, never RFC 3550's estimator.
	JitterOld   *float64 `yaml:"jitter_rfc3550_ms"`
	LineClasses []string `yaml:"line_classes"`
	// LineClassesByCarrier maps telecom/unicom/mobile/other to allowed classes.
	LineClassesByCarrier map[string][]string `yaml:"line_classes_by_carrier"`
	MaxStretch           *float64            `yaml:"max_stretch"`
	MinThroughputMbps    *float64            `yaml:"min_throughput_mbps"`
	MaxOversell          *float64            `yaml:"max_oversell"`
	MinPathMTU           *int                `yaml:"min_path_mtu"`
	Families             []string            `yaml:"families"`
	Windows              yaml.Node           `yaml:"windows"`
	TZ                   string              `yaml:"tz"`
	line                 int
	// keyLines are the lines of the keys written, for messages about one key.
	keyLines map[string]int
}

func (s *rawSLA) UnmarshalYAML(n *yaml.Node) error {
	type plain rawSLA
	if err := yamlmsg.DecodeLined(n, (*plain)(s), &s.line); err != nil {
		return err
	}
	s.keyLines = map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		s.keyLines[n.Content[i].Value] = n.Content[i].Line
	}
	return nil
}

// OldJitterKey is the SLA key jitter_ms had before (issue 35): its figure
// is the mean |D| between consecutive RTTs, not RFC 3550's smoothed
// estimator, so the name was wrong; a file that still uses it is read with
// a warning naming the new key.
const OldJitterKey = "jitter_rfc3550_ms"

// ErrRecordedOnly is returned when a live run is asked of a file that
// forbids it (recorded_only: true, as in the bundled samples).
var ErrRecordedOnly = errors.New("this candidates file is recorded_only: its addresses are illustrative and are never probed; run with --offline")

// LoadOptions say what a command requires of a candidates file. Every key
// and value present is validated whatever the options: they only make parts
// optional or refuse more.
type LoadOptions struct {
	// TargetsOnly makes vantage, regions, offers and traffic optional: serve
	// needs only candidate names and targets.
	TargetsOnly bool
	// Live refuses at load what is never probed: a file marked recorded_only
	// (or offline) and documentation addresses, each with its line.
	Live bool
}

// Load reads and validates a candidates file. Errors name the file and line:
// `candidates.yaml:12: candidates[1].targets[0].port: required for tcp`.
func Load(path string) (*File, error) {
	return LoadWith(path, LoadOptions{})
}

// LoadWith is Load with the requirements of a command other than compare.
func LoadWith(path string, o LoadOptions) (*File, error) {
	b, err := yamlmsg.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseWith(b, path, o)
}

// Parse validates a candidates document read from path (used for messages
// and to resolve relative paths).
func Parse(b []byte, path string) (*File, error) {
	return ParseWith(b, path, LoadOptions{})
}

// ParseWith is Parse with the requirements of a command other than compare.
func ParseWith(b []byte, path string, o LoadOptions) (*File, error) {
	var raw rawFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:1: empty file: want a candidates document (candidates:, offers:, traffic:, fx:, sla:; see docs/compare.md)", path)
		}
		return nil, yamlError(path, err)
	}
	if err := yamlmsg.OneDocument(dec, path, "a candidates file"); err != nil {
		return nil, err
	}
	v := &validator{path: path, opt: o}
	f := &File{Path: path, Dir: filepath.Dir(path), RecordedOnly: raw.RecordedOnly || raw.Offline}
	if o.Live && f.RecordedOnly {
		v.errf(topKeyLine(b, "recorded_only", "offline"), "recorded_only: this file's addresses are illustrative and are never probed; give a file with real targets")
	}

	f.Vantage = v.optionalPlace(raw.Vantage, "vantage", 1)
	for i, u := range raw.Users {
		f.Users = append(f.Users, v.place(u, fmt.Sprintf("users[%d]", i), u.line))
	}
	if len(raw.Candidates) == 0 {
		v.errf(1, "candidates: at least one candidate is required")
	}
	seen := map[string]int{}
	for i, rc := range raw.Candidates {
		f.Candidates = append(f.Candidates, v.candidate(f, rc, i, seen))
	}
	switch {
	case raw.Offers != "":
		f.Offers = f.resolve(raw.Offers)
	case !o.TargetsOnly:
		v.errf(1, "offers: required (the offers file of `linecheck bill`, e.g. offers: offers.yaml)")
	}
	f.Traffic = v.traffic(f, raw.Traffic)
	f.FX = v.fx(&raw.FX)
	if raw.Horizon != nil {
		if *raw.Horizon < 1 || *raw.Horizon > billing.MaxHorizonMonths {
			v.errf(topKeyLine(b, "horizon_months"), "horizon_months %d: want the contract's life in whole months, 1 to %d (e.g. 24)", *raw.Horizon, billing.MaxHorizonMonths)
		} else {
			f.HorizonMonths = *raw.Horizon
		}
	}
	f.SLA = v.sla(raw.SLA)
	v.slaWindows(f, raw.SLA)
	if len(v.errs) > 0 {
		return nil, errors.Join(v.errs...)
	}
	f.Warnings = v.warnings
	return f, nil
}

// topKeyLine is the line of the first of keys at the top of the YAML
// document b, 1 when none is there.
func topKeyLine(b []byte, keys ...string) int {
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return 1
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if slices.Contains(keys, m.Content[i].Value) {
			return m.Content[i].Line
		}
	}
	return 1
}

// resolve makes a path from the YAML relative to the YAML file's directory.
func (f *File) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.Dir, p)
}

// Candidate returns the candidate named name, or nil.
func (f *File) Candidate(name string) *Candidate {
	for i := range f.Candidates {
		if f.Candidates[i].Name == name {
			return &f.Candidates[i]
		}
	}
	return nil
}

var yamlLine = strings.NewReplacer("yaml: unmarshal errors:\n  ", "", "yaml: ", "")

// yamlError turns a yaml.v3 error ("yaml: line 4: …") into "path:4: …".
func yamlError(path string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var out []error
		for _, e := range te.Errors {
			out = append(out, lineMsg(path, e))
		}
		return errors.Join(out...)
	}
	return lineMsg(path, yamlLine.Replace(err.Error()))
}

func lineMsg(path, msg string) error {
	msg = yamlmsg.Humanize(msg)
	var line int
	var rest string
	if n, _ := fmt.Sscanf(msg, "line %d:", &line); n == 1 {
		if i := strings.Index(msg, ":"); i >= 0 {
			rest = strings.TrimSpace(msg[i+1:])
		}
		return fmt.Errorf("%s:%d: %s", path, line, rest)
	}
	return fmt.Errorf("%s: %s", path, msg)
}

type validator struct {
	path     string
	opt      LoadOptions
	errs     []error
	warnings []string
	probe    probe.Gate // the interfaces read once per file, not per target
}

// gate passes an address literal through probe's safety gate, which a live
// run's probes pass anyway: here it gives the refusal its file and line.
// Documentation addresses are refused only for a live run (replayed
// recordings carry them); a name is checked once it resolves.
func (v *validator) gate(addr, hint string) error {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return nil
	}
	err = v.probe.Check(addr, a, hint)
	if !v.opt.Live && errors.Is(err, probe.ErrDocumentation) {
		return nil
	}
	return err
}

func (v *validator) errf(line int, format string, a ...any) {
	v.errs = append(v.errs, fmt.Errorf("%s:%d: %s", v.path, line, fmt.Sprintf(format, a...)))
}

func (v *validator) warnf(line int, format string, a ...any) {
	v.warnings = append(v.warnings, fmt.Sprintf("%s:%d: %s", v.path, line, fmt.Sprintf(format, a...)))
}

// optionalPlace is place for a place that TargetsOnly makes optional.
func (v *validator) optionalPlace(p rawPlace, field string, line int) Place {
	if v.opt.TargetsOnly && p.line == 0 {
		return Place{}
	}
	return v.place(p, field, line)
}

func (v *validator) place(p rawPlace, field string, line int) Place {
	if p.line > 0 {
		line = p.line
	}
	out := Place{City: strings.TrimSpace(p.City), Carrier: strings.TrimSpace(p.Carrier), Lat: p.Lat, Lon: p.Lon, Line: line}
	if out.Carrier != "" && !userCarrier(out.Carrier) {
		v.errf(line, "%s.carrier: %q: use telecom, unicom, mobile or other", field, out.Carrier)
	}
	switch {
	case out.City != "" && (p.Lat != nil || p.Lon != nil):
		v.errf(line, "%s: give either city or lat/lon, not both", field)
	case out.City == "" && (p.Lat == nil) != (p.Lon == nil):
		v.errf(line, "%s: lat and lon go together", field)
	case out.City == "" && p.Lat == nil:
		v.errf(line, "%s: required: {city: NAME} or {lat: DEG, lon: DEG}", field)
	case p.Lat != nil && (math.IsNaN(*p.Lat) || *p.Lat < -90 || *p.Lat > 90):
		v.errf(line, "%s.lat: %g is not within -90..90", field, *p.Lat)
	case p.Lon != nil && (math.IsNaN(*p.Lon) || *p.Lon < -180 || *p.Lon > 180):
		v.errf(line, "%s.lon: %g is not within -180..180", field, *p.Lon)
	case out.City != "":
		if _, ok := cityLocation(out.City); !ok {
			v.errf(line, "%s.city: %q is not in the embedded city table: did you mean %s? (or give lat/lon instead)", field, out.City, strings.Join(suggestCities(out.City), ", "))
		}
	}
	return out
}

func (v *validator) candidate(f *File, rc rawCandidate, i int, seen map[string]int) Candidate {
	field := fmt.Sprintf("candidates[%d]", i)
	c := Candidate{Name: strings.TrimSpace(rc.Name), Provider: rc.Provider, Offer: rc.Offer, WhatIf: rc.WhatIf, Multipath: rc.Multipath, Line: rc.line}
	if c.Name == "" {
		v.errf(rc.line, "%s.name: required", field)
	} else if prev, dup := seen[c.Name]; dup {
		v.errf(rc.line, "%s.name: %q already used on line %d", field, c.Name, prev)
	} else {
		seen[c.Name] = rc.line
		field = fmt.Sprintf("candidates[%d] (%s)", i, c.Name)
	}
	c.Region = v.optionalPlace(rc.Region, field+".region", rc.line)
	if len(rc.Targets) == 0 {
		v.errf(rc.line, "%s.targets: at least one probe target is required", field)
	}
	listed := map[Target]int{}
	for j, rt := range rc.Targets {
		tf := fmt.Sprintf("%s.targets[%d]", field, j)
		t := Target{Addr: strings.TrimSpace(rt.Addr), Protocol: probe.Protocol(strings.ToLower(rt.Protocol)), Port: rt.Port}
		if t.Protocol == "" {
			t.Protocol = probe.ICMP
		}
		if t.Addr == "" {
			v.errf(rt.line, "%s.addr: required", tf)
		} else if strings.ContainsAny(t.Addr, "/ ,") {
			v.errf(rt.line, "%s.addr: %q: one address or host name, not a range or list", tf, t.Addr)
		} else if _, err := netip.ParseAddr(t.Addr); err != nil && !hostName(t.Addr) {
			v.errf(rt.line, "%s.addr: %q is neither an IP address nor a host name", tf, t.Addr)
		} else if err := v.gate(t.Addr, "it is never probed"); err != nil {
			v.errf(rt.line, "%s.addr: %v", tf, err)
		}
		switch t.Protocol {
		case probe.ICMP:
			if t.Port != 0 {
				v.errf(rt.line, "%s.port: ICMP has no port (use protocol: tcp)", tf)
			}
		case probe.TCP:
			if t.Port < 1 || t.Port > 65535 {
				v.errf(rt.line, "%s.port: required for protocol tcp, 1..65535 (got %d)", tf, t.Port)
			}
		default:
			v.errf(rt.line, "%s.protocol: %q: use icmp or tcp", tf, rt.Protocol)
		}
		if prev, dup := listed[t]; dup {
			v.errf(rt.line, "%s: %s is already listed on line %d", tf, t, prev)
		} else {
			listed[t] = rt.line
		}
		c.Targets = append(c.Targets, t)
	}
	c.Recorded = Recorded{
		BW:    f.resolve(rc.Recorded.BW),
		GPU:   f.resolve(rc.Recorded.GPU),
		Trial: f.resolve(rc.Recorded.Trial),
	}
	c.Recorded.ForwardFiles = v.recordedFiles(f, rc.Recorded.Forward, field, "forward", rc.line)
	c.Recorded.ReturnFiles = v.recordedFiles(f, rc.Recorded.Return, field, "return", rc.line)
	if len(c.Recorded.ForwardFiles) > 0 {
		c.Recorded.Forward = c.Recorded.ForwardFiles[0]
	}
	if len(c.Recorded.ReturnFiles) > 0 {
		c.Recorded.Return = c.Recorded.ReturnFiles[0]
	}
	if c.Recorded.Trial != "" {
		if c.Recorded.GPU != "" {
			v.errf(rc.line, "%s.recorded: trial and gpu: choose one (a trial bundle's gpu/ is its recorded.gpu)", field)
		} else if st, err := os.Stat(filepath.Join(c.Recorded.Trial, "gpu")); err == nil && st.IsDir() {
			c.Recorded.GPU = filepath.Join(c.Recorded.Trial, "gpu")
		}
		// The trial's line part: its backtrace is the return route, its
		// server's journal (when a test was served) the throughput.
		for _, lf := range []struct {
			into      *string
			rel, name string
		}{{&c.Recorded.Return, "line/backtrace.json", "return"}, {&c.Recorded.BW, "line/bw.journal", "bw"}} {
			p := filepath.Join(c.Recorded.Trial, filepath.FromSlash(lf.rel))
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
				continue
			}
			if *lf.into != "" {
				v.errf(rc.line, "%s.recorded: trial and %s: choose one (the trial bundle's %s is its recorded.%s)", field, lf.name, lf.rel, lf.name)
				continue
			}
			*lf.into = p
			if lf.name == "return" {
				c.Recorded.ReturnFiles = []string{p}
			}
		}
	}
	if rc.Host.Kind != 0 {
		ct, err := host.DecodeContract(&rc.Host, v.path)
		if err != nil {
			v.errs = append(v.errs, err)
		} else {
			c.Host = &ct
		}
	}
	if rc.Interconn.Kind != 0 {
		ct, err := interconnect.DecodeContract(&rc.Interconn, v.path)
		if err != nil {
			v.errs = append(v.errs, err)
		} else {
			c.Interconnect = &ct
		}
	}
	if rc.GPU.Kind != 0 {
		ct, err := gpu.DecodeContract(&rc.GPU, v.path)
		if err != nil {
			v.errs = append(v.errs, err)
		} else {
			c.GPU = &ct
		}
	}
	c.BandwidthTest = v.bandwidthTest(rc.BWTest, field)
	c.Recorded.ProbeFiles = v.recordedFiles(f, rc.Recorded.Probes, field, "probes", rc.line)
	if len(c.Recorded.ProbeFiles) > 0 {
		c.Recorded.Probes = c.Recorded.ProbeFiles[0]
	}
	for name, p := range map[string]string{"bw": c.Recorded.BW, "gpu": c.Recorded.GPU, "trial": c.Recorded.Trial} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			v.errf(rc.line, "%s.recorded.%s: %v", field, name, err)
		}
	}
	if c.Offer == "" && !v.opt.TargetsOnly {
		v.errf(rc.line, "%s.offer: required (an offer name from the offers file)", field)
	}
	return c
}

func (v *validator) traffic(f *File, rt *rawTraffic) Traffic {
	if rt == nil && v.opt.TargetsOnly {
		return Traffic{}
	}
	if rt == nil {
		v.errf(1, "traffic: required: {log: FILE} or {monthly_gb: N, peak_mbps: N, shape: diurnal}")
		return Traffic{}
	}
	t := Traffic{Log: f.resolve(rt.Log), Shape: rt.Shape, Period: rt.Period, TZ: rt.TZ}
	synthetic := rt.MonthlyGB != nil || rt.PeakMbps != nil
	switch {
	case rt.Log != "" && synthetic:
		v.errf(rt.line, "traffic: give either log or monthly_gb/peak_mbps, not both")
	case rt.Log != "":
		if _, err := os.Stat(t.Log); err != nil {
			v.errf(rt.line, "traffic.log: %v", err)
		}
		if rt.Shape != "" {
			v.errf(rt.line, "traffic.shape: only for a synthetic profile (monthly_gb, peak_mbps)")
		}
	case rt.MonthlyGB == nil || rt.PeakMbps == nil:
		v.errf(rt.line, "traffic: required: {log: FILE} or both monthly_gb and peak_mbps")
	default:
		t.MonthlyGB, t.PeakMbps = *rt.MonthlyGB, *rt.PeakMbps
		if !(t.MonthlyGB > 0) {
			v.errf(rt.line, "traffic.monthly_gb: %g: must be > 0", t.MonthlyGB)
		}
		if !(t.PeakMbps > 0) {
			v.errf(rt.line, "traffic.peak_mbps: %g: must be > 0", t.PeakMbps)
		}
		if t.Shape == "" {
			t.Shape = "diurnal"
		}
		if !slices.Contains(billing.Shapes, t.Shape) {
			v.errf(rt.line, "traffic.shape: %q: use one of %s", t.Shape, strings.Join(billing.Shapes, ", "))
		}
	}
	if t.Period != "" {
		var y, m int
		if n, _ := fmt.Sscanf(t.Period, "%4d-%2d", &y, &m); n != 2 || m < 1 || m > 12 || len(t.Period) != 7 {
			v.errf(rt.line, "traffic.period: %q: use YYYY-MM", t.Period)
		}
	}
	return t
}

func (v *validator) fx(n *yaml.Node) FX {
	fx := FX{Rates: map[string]decimal.Decimal{}, Text: map[string]string{}}
	if n.Kind == 0 {
		return fx
	}
	if n.Kind != yaml.MappingNode {
		v.errf(n.Line, "fx: a mapping like {base: CNY, USD: 7.10}")
		return fx
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Value == "base" {
			fx.Base = strings.ToUpper(val.Value)
			continue
		}
		cur := strings.ToUpper(k.Value)
		if !isCurrency(cur) {
			v.errf(k.Line, "fx.%s: not a currency code (three letters, e.g. USD)", k.Value)
			continue
		}
		d, err := billing.ParseAmount(val.Value)
		var ae *billing.AmountError
		if errors.As(err, &ae) {
			v.errf(val.Line, "fx.%s: %v", k.Value, ae)
			continue
		}
		if err != nil || !d.IsPositive() {
			v.errf(val.Line, "fx.%s: %q is not a positive rate (%s per 1 %s)", k.Value, val.Value, "base", cur)
			continue
		}
		fx.Rates[cur] = d
		fx.Text[cur] = val.Value
	}
	if fx.Base == "" {
		v.errf(n.Line, "fx.base: required: the currency everything is converted to")
	} else if !isCurrency(fx.Base) {
		v.errf(n.Line, "fx.base: %q is not a currency code", fx.Base)
	}
	return fx
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

func (v *validator) sla(rs *rawSLA) SLA {
	if rs == nil {
		return SLA{}
	}
	jitter := rs.Jitter
	if rs.JitterOld != nil {
		line := rs.keyLines[OldJitterKey]
		if jitter != nil {
			v.errf(line, "sla.%s and sla.jitter_ms both given: %s is the old name of jitter_ms; keep jitter_ms only", OldJitterKey, OldJitterKey)
		} else {
			jitter = rs.JitterOld
			v.warnf(line, "sla.%s is now jitter_ms (the figure is the mean |D| between consecutive RTTs, not RFC 3550's smoothed estimator); read as jitter_ms", OldJitterKey)
		}
	}
	s := SLA{RTTP95ms: rs.RTTP95ms, Loss: rs.Loss, JitterMs: jitter, LineClasses: rs.LineClasses,
		LineClassesByCarrier: rs.LineClassesByCarrier, MaxStretch: rs.MaxStretch,
		MinThroughputMbps: rs.MinThroughputMbps, MaxOversell: rs.MaxOversell, MinPathMTU: rs.MinPathMTU}
	if rs.Families != nil {
		line := rs.keyLines["families"]
		if len(rs.Families) == 0 {
			v.errf(line, "sla.families: empty: list the address families that must each pass (ipv4, ipv6), or leave the key out")
		}
		for _, fam := range rs.Families {
			switch {
			case fam != IPv4 && fam != IPv6:
				v.errf(line, "sla.families: %q: not an address family (ipv4, ipv6)", fam)
			case slices.Contains(s.Families, fam):
				v.errf(line, "sla.families: %s listed twice", fam)
			default:
				s.Families = append(s.Families, fam)
			}
		}
	}
	if m := s.MinPathMTU; m != nil && (*m < 68 || *m > 65535) {
		v.errf(rs.line, "sla.min_path_mtu: %d: a packet size in bytes, 68..65535 (1500 is Ethernet's)", *m)
	}
	pos := func(name string, p *float64) {
		if p != nil && (math.IsNaN(*p) || math.IsInf(*p, 0) || *p <= 0) {
			v.errf(rs.line, "sla.%s: %g: must be a finite number > 0", name, *p)
		}
	}
	pos("rtt_p95_ms", s.RTTP95ms)
	pos("jitter_ms", s.JitterMs)
	pos("max_stretch", s.MaxStretch)
	pos("min_throughput_mbps", s.MinThroughputMbps)
	if s.MaxOversell != nil && (math.IsNaN(*s.MaxOversell) || *s.MaxOversell < 0 || *s.MaxOversell >= 1) {
		v.errf(rs.line, "sla.max_oversell: %g: a fraction 0..1 of the best hour's throughput the worst may lose (0.3 = 30 %%)", *s.MaxOversell)
	}
	if s.Loss != nil && (math.IsNaN(*s.Loss) || *s.Loss < 0 || *s.Loss >= 1) {
		v.errf(rs.line, "sla.loss: %g: a fraction 0..1 (0.005 = 0.5 %%)", *s.Loss)
	}
	known := map[string]bool{}
	for _, c := range LineClasses {
		known[c] = true
	}
	sorted := append([]string(nil), LineClasses...)
	sort.Strings(sorted)
	for _, c := range s.LineClasses {
		if !known[c] {
			v.errf(rs.line, "sla.line_classes: %q: not a line class (%s)", c, strings.Join(sorted, ", "))
		}
	}
	carriers := make([]string, 0, len(s.LineClassesByCarrier))
	for k := range s.LineClassesByCarrier {
		carriers = append(carriers, k)
	}
	sort.Strings(carriers)
	for _, k := range carriers {
		if !userCarrier(k) {
			v.errf(rs.line, "sla.line_classes_by_carrier: %q: not a carrier (telecom, unicom, mobile, other)", k)
		}
		if len(s.LineClassesByCarrier[k]) == 0 {
			v.errf(rs.line, "sla.line_classes_by_carrier.%s: empty: list the classes allowed toward %s users", k, k)
		}
		for _, c := range s.LineClassesByCarrier[k] {
			if !known[c] {
				v.errf(rs.line, "sla.line_classes_by_carrier.%s: %q: not a line class (%s)", k, c, strings.Join(sorted, ", "))
			}
		}
	}
	return s
}

// hostName reports whether s is a syntactically valid DNS host name
// (RFC 1123 labels; underscores allowed, as resolvers accept them).
func hostName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}
