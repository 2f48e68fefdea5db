package netlab

import (
	"fmt"
	"strconv"
	"strings"
)

// Rate shapes link idx (0..Hops) to bitsPerSec in both directions with a
// token bucket filter (tbf) on both of its ends; 0 removes the shaping. The
// bucket holds what the rate sends in 4 ms (one jiffy at HZ=250), at least
// 64 KiB so that a full GSO packet fits, and a packet waits at most 50 ms.
// It may be called again while traffic flows to change the rate.
//
// A tbf on a host's own device pushes back on the host's sockets instead of
// dropping (a UDP sender is slowed to the rate, loses nothing); to see loss
// as on a real bottleneck, shape only a router's end with RateEnd.
func (l *Lab) Rate(idx int, bitsPerSec float64) error {
	if err := l.RateEnd(idx, false, bitsPerSec); err != nil {
		return err
	}
	return l.RateEnd(idx, true, bitsPerSec)
}

// RateEnd shapes what one end of link idx sends: the left end (the client
// side's node) when right is false, else the right end. On link 0 the right
// end is router 1 sending toward the client; on link Hops the left end is
// the last router sending toward the server.
func (l *Lab) RateEnd(idx int, right bool, bitsPerSec float64) error {
	lk, err := l.linkAt("rate", idx)
	if err != nil {
		return err
	}
	if lk.tun {
		return fmt.Errorf("netlab %s: rate: link %d is the TUN link; shape another", l.cfg.Prefix, idx)
	}
	end := struct{ ns, dev string }{lk.left.name, lk.ifL}
	if right {
		end.ns, end.dev = lk.right.name, lk.ifR
	}
	{
		var args []string
		if bitsPerSec <= 0 {
			args = []string{"qdisc", "del", "dev", end.dev, "root"}
		} else {
			burst := max(int(bitsPerSec/8/250), 65536)
			args = []string{"qdisc", "replace", "dev", end.dev, "root", "tbf", "rate", strconv.FormatFloat(bitsPerSec, 'f', 0, 64) + "bit",
				"burst", strconv.Itoa(burst), "latency", "50ms"}
		}
		out, err := nsCommand(end.ns, "tc", args...).CombinedOutput()
		if err != nil && !(bitsPerSec <= 0 && strings.Contains(string(out), "No such file")) {
			return fmt.Errorf("netlab %s: tc %s in %s: %w: %s", l.cfg.Prefix, strings.Join(args, " "), end.ns, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
