package exporter

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/yamlmsg"
)

// Target is one probe target of one candidate: what serve measures and the
// label set its metrics carry.
type Target struct {
	Candidate string
	Addr      string
	Protocol  string // icmp, tcp, udp
	Port      int    // tcp and udp
}

// Label is the value of the target label: the address, with the port for
// tcp and udp so that two ports of one host stay apart.
func (t Target) Label() string {
	if t.Protocol == "icmp" {
		return t.Addr
	}
	return net.JoinHostPort(t.Addr, strconv.Itoa(t.Port))
}

func (t Target) key() string { return t.Candidate + "\x00" + t.Protocol + "\x00" + t.Label() }

// candidatesFile is the subset of the candidates file (issue 4's schema) that
// serve needs: names and targets.
type candidatesFile struct {
	// RecordedOnly (or Offline) marks a file whose addresses are illustrative:
	// compare replays its recordings and never probes; serve refuses it.
	RecordedOnly bool `yaml:"recorded_only"`
	Offline      bool `yaml:"offline"`
	Candidates   []struct {
		Name    string `yaml:"name"`
		Targets []struct {
			Addr     string `yaml:"addr"`
			Protocol string `yaml:"protocol"`
			Port     int    `yaml:"port"`
		} `yaml:"targets"`
	} `yaml:"candidates"`
}

// ErrRecordedOnly is returned for a candidates file marked recorded_only or
// offline: its addresses are illustrative (the bundled samples use RFC 5737
// documentation addresses) and must never be probed.
var ErrRecordedOnly = errors.New("recorded_only: this file's addresses are illustrative and are never probed; serve needs a file with real targets")

// LoadTargets reads the candidates file at path and returns every target, in
// file order. Errors name the file and the candidate.
func LoadTargets(path string) ([]Target, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseTargets(b, path)
}

// ParseTargets parses a candidates file's text (name is used in messages).
func ParseTargets(b []byte, name string) ([]Target, error) {
	var f candidatesFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, yamlmsg.FileError(name, err)
	}
	if f.RecordedOnly || f.Offline {
		return nil, fmt.Errorf("%s: %w", name, ErrRecordedOnly)
	}
	if len(f.Candidates) == 0 {
		return nil, fmt.Errorf("%s: candidates: none listed", name)
	}
	var out []Target
	seen := map[string]bool{}
	names := map[string]bool{}
	for i, c := range f.Candidates {
		where := fmt.Sprintf("%s: candidates[%d]", name, i)
		if c.Name == "" {
			return nil, fmt.Errorf("%s: name: missing", where)
		}
		if names[c.Name] {
			return nil, fmt.Errorf("%s: name: %q is used twice", where, c.Name)
		}
		names[c.Name] = true
		where = fmt.Sprintf("%s: candidate %q", name, c.Name)
		if len(c.Targets) == 0 {
			return nil, fmt.Errorf("%s: targets: none listed", where)
		}
		for j, tg := range c.Targets {
			t := Target{Candidate: c.Name, Addr: tg.Addr, Protocol: tg.Protocol, Port: tg.Port}
			if t.Protocol == "" {
				t.Protocol = "icmp"
			}
			if t.Addr == "" {
				return nil, fmt.Errorf("%s: targets[%d]: addr: missing", where, j)
			}
			// Documentation addresses (RFC 5737, RFC 3849) are illustrative, as
			// in the bundled samples: compare refuses them live, and so does serve.
			if a, err := netip.ParseAddr(t.Addr); err == nil {
				if kind, ok := route.SpecialRange(a); ok && kind == "documentation" {
					return nil, fmt.Errorf("%s: targets[%d]: addr: %s is a documentation address, illustrative only: it is never probed", where, j, t.Addr)
				}
			}
			switch t.Protocol {
			case "icmp":
				t.Port = 0
			case "tcp", "udp":
				if t.Port < 1 || t.Port > 65535 {
					return nil, fmt.Errorf("%s: targets[%d]: port: %d is not 1..65535 (needed for %s)", where, j, tg.Port, t.Protocol)
				}
			default:
				return nil, fmt.Errorf("%s: targets[%d]: protocol: %q is not icmp, tcp or udp", where, j, tg.Protocol)
			}
			if seen[t.key()] {
				return nil, fmt.Errorf("%s: targets[%d]: %s %s is listed twice", where, j, t.Protocol, t.Label())
			}
			seen[t.key()] = true
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, errors.New(name + ": no targets")
	}
	return out, nil
}
