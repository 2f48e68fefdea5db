package pacing

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// DefaultTTL is how long SystemLookup's answer is cached when its TTL
// cannot be learned (a name from /etc/hosts, a nameserver that does not
// answer the direct question).
const DefaultTTL = time.Minute

// SystemLookup looks names up through the system's resolver (/etc/hosts,
// search domains, the configured nameservers: the addresses every other
// program on the machine gets) and learns the answer's TTL by asking the
// first nameserver of /etc/resolv.conf the same question directly, since
// the system resolver does not report TTLs.
type SystemLookup struct{}

// LookupTTL implements Lookup.
func (SystemLookup) LookupTTL(ctx context.Context, host string) ([]netip.Addr, time.Duration, error) {
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, 0, err
	}
	ttl := DefaultTTL
	if ns := firstNameserver("/etc/resolv.conf"); ns != "" {
		if t, err := askTTL(ctx, ns, host, wantsV4(addrs)); err == nil {
			ttl = t
		}
	}
	return addrs, ttl, nil
}

func wantsV4(addrs []netip.Addr) bool {
	for _, a := range addrs {
		if a.Unmap().Is4() {
			return true
		}
	}
	return false
}

// firstNameserver returns "addr:53" of the first nameserver line of a
// resolv.conf, or "".
func firstNameserver(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "nameserver" {
			if a, err := netip.ParseAddr(fields[1]); err == nil {
				return netip.AddrPortFrom(a, 53).String()
			}
		}
	}
	return ""
}

// askTTL asks the nameserver at server (ip:port) for host's A (v4) or AAAA
// records over UDP and returns the smallest TTL of the answer (CNAMEs
// included: the chain expires with its shortest link).
func askTTL(ctx context.Context, server, host string, v4 bool) (time.Duration, error) {
	name, err := dnsmessage.NewName(strings.TrimSuffix(host, ".") + ".")
	if err != nil {
		return 0, err
	}
	qtype := dnsmessage.TypeAAAA
	if v4 {
		qtype = dnsmessage.TypeA
	}
	var idb [2]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return 0, err
	}
	id := binary.BigEndian.Uint16(idb[:])
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: id, RecursionDesired: true})
	if err := b.StartQuestions(); err != nil {
		return 0, err
	}
	if err := b.Question(dnsmessage.Question{Name: name, Type: qtype, Class: dnsmessage.ClassINET}); err != nil {
		return 0, err
	}
	q, err := b.Finish()
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "udp", server)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := c.Write(q); err != nil {
		return 0, err
	}
	buf := make([]byte, 1500)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return 0, err
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf[:n])
		if err != nil || h.ID != id || !h.Response {
			continue // not the answer to this question
		}
		if h.RCode != dnsmessage.RCodeSuccess {
			return 0, errors.New(h.RCode.String())
		}
		if err := p.SkipAllQuestions(); err != nil {
			return 0, err
		}
		var ttl uint32
		found := false
		for {
			rh, err := p.AnswerHeader()
			if errors.Is(err, dnsmessage.ErrSectionDone) {
				break
			}
			if err != nil {
				return 0, err
			}
			if !found || rh.TTL < ttl {
				ttl, found = rh.TTL, true
			}
			if err := p.SkipAnswer(); err != nil {
				return 0, err
			}
		}
		if !found {
			return 0, errors.New("no answer records")
		}
		return time.Duration(ttl) * time.Second, nil
	}
}
