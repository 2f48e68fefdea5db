package route

import (
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hidden is what a masked hop shows in place of its address (and what
// free text shows in place of a name that only a masked hop carried).
const Hidden = "hidden"

// HopMask masks the hops at TTL 1 to N of the traces a report is made of
// (--hide-hops N, as trippy's privacy mode): a report meant for a provider
// need not show the user's own network. It works on the document's value,
// once, before any format renders it, so no format can leak what it
// masks; statistics and line class are computed on the real hops before.
//
// A masked responder keeps its figures (sent, received, RTT, jitter) and
// loses its address, AS number, AS name, country, carrier and source. Free
// text (a rule, a note, the landing network) has every address, name and
// AS number that only masked hops carried replaced by Hidden; a value a
// shown hop also carries is not a secret and stays.
type HopMask struct {
	// N is the highest masked TTL; 0 masks nothing.
	N       int
	secrets []string
}

// NewHopMask returns the mask of the hops at TTL 1..n of traces (nil
// entries are skipped): their secrets are gathered from all of them, so a
// document made of several traces is masked alike everywhere.
func NewHopMask(n int, traces ...*Trace) HopMask {
	m := HopMask{N: n}
	if n <= 0 {
		return m
	}
	hidden, shown := map[string]bool{}, map[string]bool{}
	for _, tr := range traces {
		if tr == nil {
			continue
		}
		shown[tr.Target], shown[tr.Addr] = true, true
		for _, h := range tr.Hops {
			set := shown
			if h.TTL <= n {
				set = hidden
			}
			for _, r := range h.Responders {
				carrier := r.Carrier
				if rangeKind(r) {
					// "private", "cgnat": the kind of range, which the
					// notes also use as a word, names no one.
					carrier = ""
				}
				for _, s := range []string{r.Addr, r.ASName, carrier, ShortName(carrier), ShortName(r.ASName), r.Country} {
					if s != "" {
						set[s] = true
					}
				}
				if r.ASN > 0 {
					set["AS"+strconv.Itoa(r.ASN)] = true
				}
			}
		}
	}
	for s := range hidden {
		if !shown[s] && s != Hidden {
			m.secrets = append(m.secrets, s)
		}
	}
	// Longest first, so that "ChinaNet Shanghai" goes before "ChinaNet"
	// could; ties in a fixed order so that output is stable.
	sort.Slice(m.secrets, func(i, j int) bool {
		a, b := m.secrets[i], m.secrets[j]
		if len(a) != len(b) {
			return len(a) > len(b)
		}
		return a < b
	})
	return m
}

// rangeKind reports whether r's carrier is the kind of special range its
// address is in (never looked up), not a network's name.
func rangeKind(r Responder) bool {
	switch r.ASSource {
	case "", SourcePrefixTable, SourceCarrierTable, SourceASNDB, SourceDataset, SourceRecording, SourceNone:
		return false
	}
	return r.Carrier == r.ASSource
}

// Active reports whether the mask hides anything.
func (m HopMask) Active() bool { return m.N > 0 }

// Hides reports whether the hop at ttl is masked.
func (m HopMask) Hides(ttl int) bool { return m.N > 0 && ttl <= m.N }

// Text returns s with every secret of the masked hops replaced by Hidden
// where it stands as a whole word (an address inside a longer number, or
// a name inside a longer word, is another value and stays).
func (m HopMask) Text(s string) string {
	for _, sec := range m.secrets {
		s = replaceWord(s, sec, Hidden)
	}
	return s
}

// replaceWord replaces old in s with repl wherever it is not part of a
// longer word: the runes either side are neither letters, digits, '.' nor
// ':' (which would make it part of an address).
func replaceWord(s, old, repl string) string {
	if old == "" || !strings.Contains(s, old) {
		return s
	}
	var b strings.Builder
	done := 0 // s[:done] is written
	for from := 0; ; {
		i := strings.Index(s[from:], old)
		if i < 0 {
			b.WriteString(s[done:])
			return b.String()
		}
		i += from
		end := i + len(old)
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if i > 0 && wordRune(before) || end < len(s) && wordRune(after) {
			_, size := utf8.DecodeRuneInString(s[i:])
			from = i + size
			continue
		}
		b.WriteString(s[done:i] + repl)
		done, from = end, end
	}
}

func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == ':'
}

// Texts masks each of ss (Text); nil stays nil.
func (m HopMask) Texts(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = m.Text(s)
	}
	return out
}

// Trace returns a masked copy of tr (tr itself when the mask is off or tr
// is nil): the responders at TTL 1..N lose their names (HopMask), the AS
// path is rebuilt from the shown hops only (a network first seen at a
// masked TTL begins at the first shown hop it answers, or is left out),
// the line evidence leaves the masked hops out, an MTU drop named by a
// masked router is named Hidden, and HiddenHops says N. The line class
// and every figure stay as computed on the real hops.
func (m HopMask) Trace(tr *Trace) *Trace {
	if !m.Active() || tr == nil {
		return tr
	}
	c := *tr
	c.HiddenHops = m.N
	c.Hops = make([]Hop, len(tr.Hops))
	for i, h := range tr.Hops {
		c.Hops[i] = h
		if !m.Hides(h.TTL) {
			continue
		}
		rs := make([]Responder, len(h.Responders))
		for j, r := range h.Responders {
			rs[j] = Responder{Addr: Hidden, Recv: r.Recv, RTT: r.RTT, Jitter: r.Jitter, Flows: r.Flows, Samples: r.Samples}
		}
		c.Hops[i].Responders = rs
	}
	if tr.ASPath != nil {
		c.ASPath = ASPath(&c)
		if c.ASPath == nil {
			c.ASPath = []ASHop{}
		}
	}
	c.LineEvidence = m.Evidence(tr.LineEvidence)
	m.maskMultipath(&c)
	if tr.MTU != nil {
		mtu := *tr.MTU
		mtu.Drops = make([]MTUDrop, len(tr.MTU.Drops))
		for i, d := range tr.MTU.Drops {
			if m.Hides(d.TTL) && d.ReportedBy != "" {
				d.ReportedBy = Hidden
			}
			d.ReportedBy = m.Text(d.ReportedBy)
			mtu.Drops[i] = d
		}
		c.MTU = &mtu
	}
	return &c
}

// HideBacktraceHops returns d with the hops at TTL 1..n of every target's
// trace masked (HopMask over all of them, so a name one trace hides is
// hidden in the others' text too) and HiddenHops set; d itself when n is 0.
func HideBacktraceHops(d *BacktraceDoc, n int) *BacktraceDoc {
	if n <= 0 || d == nil {
		return d
	}
	var traces []*Trace
	for _, r := range d.Results {
		traces = append(traces, r.Trace)
	}
	m := NewHopMask(n, traces...)
	c := *d
	c.HiddenHops = n
	c.Results = make([]BacktraceResult, len(d.Results))
	for i, r := range d.Results {
		r.Rule = m.Text(r.Rule)
		r.Trace = m.Trace(r.Trace)
		c.Results[i] = r
	}
	return &c
}

// Evidence returns a masked copy of e: the masked hops left out, the rule,
// landing and notes masked as Text. nil stays nil.
func (m HopMask) Evidence(e *LineEvidence) *LineEvidence {
	if !m.Active() || e == nil {
		return e
	}
	c := *e
	c.Hops = []EvidenceHop{}
	for _, h := range e.Hops {
		if !m.Hides(h.TTL) {
			c.Hops = append(c.Hops, h)
		}
	}
	if e.Hops == nil && len(c.Hops) == 0 {
		c.Hops = nil
	}
	c.Rule, c.Landing, c.Notes = m.Text(e.Rule), m.Text(e.Landing), m.Texts(e.Notes)
	return &c
}

// ASPath returns p without the networks that begin at a masked TTL: used
// where only the path is kept, not the trace it came from (a network that
// goes on past TTL N is left out too, as its length is not known).
func (m HopMask) ASPath(p []ASHop) []ASHop {
	if !m.Active() || p == nil {
		return p
	}
	out := []ASHop{}
	for _, h := range p {
		if !m.Hides(h.TTL) {
			out = append(out, h)
		}
	}
	return out
}

// HiddenHopsNote is the line a report prints when its first n hops are
// masked; "" when n is 0.
func HiddenHopsNote(n int) string {
	if n <= 0 {
		return ""
	}
	ttls := "TTL 1"
	if n > 1 {
		ttls = "TTL 1–" + strconv.Itoa(n)
	}
	return "hidden hops: " + ttls + " (--hide-hops " + strconv.Itoa(n) + "): their addresses, names, AS numbers, networks and " +
		"countries are masked and the AS path leaves them out; statistics and line class are from the real hops"
}
