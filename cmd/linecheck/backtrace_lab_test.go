package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// The lab: client → r1 (10.77.0.2) → r2 (10.77.1.2) → r3 (10.77.2.2) →
// server 10.77.3.2. A --prefix-table makes the routers' ranges stand in for
// carrier ranges; 10.77.3.99 has no host behind r3.
const btLabTargets = `targets:
  - {name: lab-telecom, carrier: telecom, city: Shanghai, addr: 10.77.3.2}
  - {name: lab-nobody, carrier: unicom, city: Beijing, addr: 10.77.3.99}
  - {name: lab-r3, carrier: mobile, city: Guangzhou, addr: 10.77.2.2}
`

// Rows: the routers' links as CN2 (GIA) or as the ChinaNet backbone (163);
// the server's link is a Shanghai Telecom access network either way.
const btTableGIA = "10.77.1.0/24\t4809\tCN2\tcn2\tyes\tbackbone\tlab stand-in for 59.43.0.0/16\n" +
	"10.77.2.0/24\t4809\tCN2\tcn2\tyes\tbackbone\tlab stand-in for 59.43.0.0/16\n" +
	"10.77.3.0/24\t4812\tChinaNet Shanghai\tchinanet\tyes\tedge\tlab stand-in for a Shanghai Telecom access range\n"

const btTable163 = "10.77.1.0/24\t4134\tChinaNet\tchinanet\tyes\tbackbone\tlab stand-in for 202.97.0.0/16\n" +
	"10.77.2.0/24\t4134\tChinaNet\tchinanet\tyes\tbackbone\tlab stand-in for 202.97.0.0/16\n" +
	"10.77.3.0/24\t4812\tChinaNet Shanghai\tchinanet\tyes\tedge\tlab stand-in for a Shanghai Telecom access range\n"

func TestBacktraceInLab(t *testing.T) {
	netlab.RequireRoot(t)
	lab := netlab.UpForTest(t, netlab.Config{Prefix: "lcbt", Hops: 3, IPv6: true})
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	targets := write("targets.yaml", btLabTargets)
	backtrace := func(t *testing.T, args ...string) *route.BacktraceDoc {
		t.Helper()
		cmd := lab.Exec(lab.Client(), os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
		cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join(append([]string{"backtrace",
			"--targets", targets, "--timeout", "500ms", "--max-ttl", "8", "--vantage", "lab-client", "--format", "json"}, args...), "\x1f"))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("backtrace %v: %v\n%s", args, err, stderr.String())
		}
		doc, err := route.ParseBacktrace("stdout", out)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if len(doc.Results) != 3 {
			t.Fatalf("%d results", len(doc.Results))
		}
		return doc
	}

	t.Run("the same live route is cn2-gia or chinanet-163 by the table", func(t *testing.T) {
		gia := backtrace(t, "--prefix-table", write("gia.tsv", btTableGIA))
		r := gia.Results[0]
		if !r.Reached || r.LineClass != route.LineCN2GIA || r.Confidence != route.ConfidenceHigh ||
			r.EvidencePhrase() != "CN2 ×2, lands on ChinaNet Shanghai" {
			t.Errorf("GIA table: %+v (%s)", r, r.EvidencePhrase())
		}
		c163 := backtrace(t, "--prefix-table", write("163.tsv", btTable163))
		r = c163.Results[0]
		if !r.Reached || r.LineClass != route.LineChinaNet163 || r.Confidence != route.ConfidenceHigh {
			t.Errorf("163 table: %+v (%s)", r, r.EvidencePhrase())
		}
		// Same hops both times: the lab's routers, hop k = router k.
		for _, d := range []*route.BacktraceDoc{gia, c163} {
			var addrs []string
			for _, h := range d.Results[0].Trace.Hops {
				addrs = append(addrs, h.Responders[0].Addr)
			}
			if strings.Join(addrs, " ") != strings.Join(lab.RouterAddrs(false), " ") {
				t.Errorf("hops %v, want %v", addrs, lab.RouterAddrs(false))
			}
		}
		plain := backtrace(t)
		if c := plain.Results[0].LineClass; c != route.LineUnknown {
			t.Errorf("without a table the private lab hops gave %s", c)
		}
	})

	t.Run("the GIA tri-network hand-off and GT on the same live route", func(t *testing.T) {
		// r1 CN2, r2 and r3 the ChinaNet backbone; the server is a Unicom user
		// (hand-off into another carrier: GIA, lowered) or a Telecom user (GT).
		head := "10.77.0.0/24\t4809\tCN2\tcn2\tyes\tbackbone\tlab stand-in for 59.43.0.0/16\n" +
			"10.77.1.0/24\t4134\tChinaNet\tchinanet\tyes\tbackbone\tlab stand-in for 202.97.0.0/16\n" +
			"10.77.2.0/24\t4134\tChinaNet\tchinanet\tyes\tbackbone\tlab stand-in for 202.97.0.0/16\n"
		tri := backtrace(t, "--prefix-table", write("tri.tsv", head+"10.77.3.0/24\t4837\tUnicom Beijing\tcu-4837\tyes\tedge\tlab stand-in\n"))
		r := tri.Results[0]
		if r.LineClass != route.LineCN2GIA || r.Confidence != route.ConfidenceLow || r.Trace.LineEvidence.Landing != "Unicom Beijing" ||
			!strings.Contains(r.Rule, "tri-network hand-off") {
			t.Errorf("hand-off into Unicom: %s %s %q landing %q", r.LineClass, r.Confidence, r.Rule, r.Trace.LineEvidence.Landing)
		}
		gt := backtrace(t, "--prefix-table", write("gt.tsv", head+"10.77.3.0/24\t4812\tChinaNet Shanghai\tchinanet\tyes\tedge\tlab stand-in\n"))
		if r := gt.Results[0]; r.LineClass != route.LineCN2GT || r.Confidence != route.ConfidenceMedium {
			t.Errorf("into Telecom's own network: %s %s %q", r.LineClass, r.Confidence, r.Rule)
		}
	})

	t.Run("an unreachable target does not stop the others", func(t *testing.T) {
		d := backtrace(t, "--prefix-table", write("gia.tsv", btTableGIA), "--cycles", "2", "--interval", "100ms")
		byName := map[string]route.BacktraceResult{}
		for _, r := range d.Results {
			byName[r.Name] = r
		}
		if r := byName["lab-nobody"]; r.Reached || r.Loss != nil || r.RTT.P50 != nil || r.Trace == nil {
			t.Errorf("unreachable target: %+v", r)
		}
		for _, name := range []string{"lab-telecom", "lab-r3"} {
			r := byName[name]
			if !r.Reached || r.Loss == nil || *r.Loss != 0 || r.RTT.P50 == nil || r.RTT.P95 == nil {
				t.Errorf("%s: %+v", name, r)
			}
		}
		// r3 is hop 3 and the destination of its own trace.
		if h := byName["lab-r3"].Trace.Hops; len(h) != 3 || h[2].Responders[0].Addr != "10.77.2.2" {
			t.Errorf("lab-r3 hops %+v", h)
		}
	})

	t.Run("tcp and ipv6 targets", func(t *testing.T) {
		v6 := write("targets6.yaml", "targets:\n  - {name: lab-v6, carrier: telecom, city: Shanghai, addr: '"+lab.ServerAddr(true)+"'}\n")
		tbl := write("gia6.tsv", "fd77:0:0:1::/64\t4809\tCN2\tcn2\tyes\tbackbone\tlab stand-in\n"+
			"fd77:0:0:2::/64\t4809\tCN2\tcn2\tyes\tbackbone\tlab stand-in\n")
		for _, proto := range []string{"icmp", "tcp"} {
			cmd := lab.Exec(lab.Client(), os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
			cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"backtrace", "--targets", v6,
				"--prefix-table", tbl, "--proto", proto, "--port", "80", "--timeout", "500ms", "--max-ttl", "8", "--format", "json"}, "\x1f"))
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v", proto, err)
			}
			d, err := route.ParseBacktrace("stdout", out)
			if err != nil {
				t.Fatal(err)
			}
			r := d.Results[0]
			if !r.Reached || r.LineClass != route.LineCN2GIA || string(r.Trace.Protocol) != proto || len(r.Trace.Hops) != 4 {
				t.Errorf("%s over IPv6: %+v", proto, r)
			}
		}
	})

	t.Run("pacing holds across targets", func(t *testing.T) {
		// Every probe of every target passes r1; its kernel timestamps them.
		cap := captureEchoRequests(t, lab.Router(1), lab.ClientAddr(false))
		const rate = 25.0
		d := backtrace(t, "--rate", fmt.Sprint(rate), "--cycles", "2", "--interval", "100ms")
		at := cap.stop()
		sent := 0
		for _, r := range d.Results {
			for _, h := range r.Trace.Hops {
				sent += h.Sent
			}
		}
		// The report counts probes up to each destination's TTL; the first
		// cycle also sent TTLs past it (up to --max-ttl 8), which r1 saw too.
		if len(at) < sent || len(at) > 2*8*3 || sent < 30 {
			t.Fatalf("r1 saw %d echo requests, the report counts %d (at most 48 were sent)", len(at), sent)
		}
		// A shared token bucket (burst 16): any window between two probes holds
		// at most 16 + rate·window of them. Three targets each paced on its own
		// would send up to 3× that.
		for i := range at {
			for j := i + 1; j < len(at); j++ {
				n := j - i + 1
				if allowed := backtraceBurst + rate*at[j].Sub(at[i]).Seconds() + 0.05*rate; float64(n) > allowed {
					t.Fatalf("probes %d..%d (%d) within %v: more than %.1f allowed at %g/s", i, j, n, at[j].Sub(at[i]), allowed, rate)
				}
			}
		}
		if span := at[len(at)-1].Sub(at[0]); span < time.Duration(float64(len(at)-backtraceBurst-1)/rate*float64(time.Second)) {
			t.Errorf("%d probes within %v", len(at), span)
		}
	})
}

type echoCapture struct {
	fd       int
	mu       sync.Mutex
	at       []time.Time
	done     chan struct{}
	drainBy  time.Time // set before done is closed
	stopWait chan struct{}
	once     sync.Once
}

// captureEchoRequests records the kernel receive time of every ICMP echo
// request from src that arrives in namespace ns (an AF_PACKET socket opened
// inside it).
func captureEchoRequests(t *testing.T, ns, src string) *echoCapture {
	t.Helper()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	h, err := netns.GetFromName(ns)
	if err != nil {
		t.Fatal(err)
	}
	if err := netns.Set(h); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM, int(htons(unix.ETH_P_IP)))
	if e := netns.Set(orig); e != nil {
		t.Fatal(e)
	}
	runtime.UnlockOSThread()
	h.Close()
	orig.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		t.Fatal(err)
	}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 100000})
	want := [4]byte{}
	copy(want[:], netip4(src))
	c := &echoCapture{fd: fd, done: make(chan struct{})}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		buf := make([]byte, 2048)
		oob := make([]byte, 128)
		for {
			n, oobn, _, from, err := unix.Recvmsg(fd, buf, oob, 0)
			select {
			case <-c.done:
				// A read timed out (100 ms without a packet): everything
				// that arrived is read. The drain is bounded all the same.
				if err != nil || time.Now().After(c.drainBy) {
					return
				}
			default:
			}
			if err != nil {
				continue
			}
			if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
				continue
			}
			b := buf[:n]
			if len(b) < 28 || b[9] != 1 || [4]byte(b[12:16]) != want {
				continue
			}
			ihl := int(b[0]&0x0f) * 4
			if len(b) < ihl+8 || b[ihl] != 8 { // echo request
				continue
			}
			msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
			for _, m := range msgs {
				if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
					sec := int64(binary.NativeEndian.Uint64(m.Data[0:8]))
					nsec := int64(binary.NativeEndian.Uint64(m.Data[8:16]))
					c.mu.Lock()
					c.at = append(c.at, time.Unix(sec, nsec))
					c.mu.Unlock()
				}
			}
		}
	}()
	c.stopWait = stopped
	t.Cleanup(func() { c.stop() })
	return c
}

// stop ends the capture once the socket has been read empty (no packet for
// 100 ms), so that packets still queued when the probing process ended are
// counted however far the reader lags behind on a loaded machine.
func (c *echoCapture) stop() []time.Time {
	c.once.Do(func() {
		c.drainBy = time.Now().Add(5 * time.Second)
		close(c.done)
		<-c.stopWait
		unix.Close(c.fd)
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]time.Time(nil), c.at...)
	sort.Slice(out, func(a, b int) bool { return out[a].Before(out[b]) })
	return out
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func netip4(s string) []byte {
	var b [4]byte
	fmt.Sscanf(s, "%d.%d.%d.%d", &b[0], &b[1], &b[2], &b[3])
	return b[:]
}
