package pacing

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// fakeDNS answers on a loopback UDP port: for "cdn.test." a CNAME (TTL 300)
// and an A record (TTL 42), preceded by a reply with a wrong ID that must be
// ignored; every other name gets NXDOMAIN.
func fakeDNS(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			reply := func(id uint16, rcode dnsmessage.RCode, answers bool) []byte {
				b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: id, Response: true, RCode: rcode, RecursionAvailable: true})
				b.StartQuestions()
				b.Question(q)
				b.StartAnswers()
				if answers {
					target := dnsmessage.MustNewName("edge.cdn.test.")
					b.CNAMEResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 300}, dnsmessage.CNAMEResource{CNAME: target})
					b.AResource(dnsmessage.ResourceHeader{Name: target, Class: dnsmessage.ClassINET, TTL: 42}, dnsmessage.AResource{A: [4]byte{127, 0, 0, 7}})
				}
				m, _ := b.Finish()
				return m
			}
			if q.Name.String() == "cdn.test." {
				pc.WriteTo(reply(h.ID+1, dnsmessage.RCodeSuccess, true), from) // someone else's answer
				pc.WriteTo(reply(h.ID, dnsmessage.RCodeSuccess, true), from)
			} else {
				pc.WriteTo(reply(h.ID, dnsmessage.RCodeNameError, false), from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

// The TTL of an answer is its shortest link: the A record's 42 s, not the
// CNAME's 300 s.
func TestAskTTLTakesTheShortestTTLOfTheAnswer(t *testing.T) {
	server := fakeDNS(t)
	ttl, err := askTTL(context.Background(), server, "cdn.test", true)
	if err != nil || ttl != 42*time.Second {
		t.Fatalf("ttl %v, err %v; want 42s", ttl, err)
	}
	if _, err := askTTL(context.Background(), server, "nx.test", true); err == nil {
		t.Error("NXDOMAIN: no error")
	}
}

func TestFirstNameserver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "resolv.conf")
	os.WriteFile(path, []byte("# comment\nsearch example\nnameserver not-an-ip\nnameserver 127.0.0.53\nnameserver 127.0.0.54\n"), 0o644)
	if got := firstNameserver(path); got != "127.0.0.53:53" {
		t.Errorf("%q", got)
	}
	os.WriteFile(path, []byte("nameserver ::1\n"), 0o644)
	if got := firstNameserver(path); got != "[::1]:53" {
		t.Errorf("%q", got)
	}
	if got := firstNameserver(filepath.Join(t.TempDir(), "none")); got != "" {
		t.Errorf("missing file: %q", got)
	}
}
