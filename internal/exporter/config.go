package exporter

import (
	"net"
	"strconv"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
)

// Target is one probe target of one candidate: what serve measures and the
// label set its metrics carry.
type Target struct {
	Candidate string
	Addr      string          // an IP address or a host name, as the file writes it
	Protocol  engine.Protocol // icmp or tcp
	Port      int             // tcp
	// Carrier and City label linecheck_line_class_info for the targets of a
	// backtrace target list (serve --targets): the users' carrier and city
	// the return route leads to; empty for candidates-file targets.
	Carrier, City string
	// Multipath traces the target with multipath discovery (the first
	// target of a candidate with multipath: true, as compare traces it).
	Multipath bool
}

// Label is the value of the target label: the address, with the port for
// tcp so that two ports of one host stay apart.
func (t Target) Label() string {
	if t.Protocol == engine.ICMP {
		return t.Addr
	}
	return net.JoinHostPort(t.Addr, strconv.Itoa(t.Port))
}

func (t Target) key() string { return t.Candidate + "\x00" + string(t.Protocol) + "\x00" + t.Label() }

// loadOptions are what serve requires of a candidates file: only candidate
// names and targets (vantage, regions, offers and traffic may be left out,
// and are checked as strictly as compare checks them when present), and
// nothing that is never probed (recorded_only files, documentation addresses).
var loadOptions = candidates.LoadOptions{TargetsOnly: true, Live: true}

// LoadTargets reads the candidates file at path with compare's loader and
// returns every target, in file order. Errors name the file and line.
func LoadTargets(path string) ([]Target, error) {
	f, err := candidates.LoadWith(path, loadOptions)
	if err != nil {
		return nil, err
	}
	return targetsOf(f), nil
}

// ParseTargets is LoadTargets on a candidates file's text; path names it in
// messages and anchors its relative paths.
func ParseTargets(b []byte, path string) ([]Target, error) {
	f, err := candidates.ParseWith(b, path, loadOptions)
	if err != nil {
		return nil, err
	}
	return targetsOf(f), nil
}

func targetsOf(f *candidates.File) []Target {
	var out []Target
	for _, c := range f.Candidates {
		for i, t := range c.Targets {
			out = append(out, Target{Candidate: c.Name, Addr: t.Addr, Protocol: t.Protocol, Port: t.Port, Multipath: c.Multipath && i == 0})
		}
	}
	return out
}
