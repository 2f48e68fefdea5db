package netlab

import (
	"fmt"
	"strconv"
	"strings"
)

// MTU sets the MTU of both ends of link idx (0..Hops) and flushes the path
// MTU every namespace has learned, so that the next probe starts from the
// devices' MTU again (the kernel keeps a learned path MTU for 10 minutes).
func (l *Lab) MTU(idx, mtu int) error {
	lk, err := l.linkAt("mtu", idx)
	if err != nil {
		return err
	}
	for _, end := range []struct{ ns, dev string }{{lk.left.name, lk.ifL}, {lk.right.name, lk.ifR}} {
		if out, err := nsCommand(end.ns, "ip", "link", "set", "dev", end.dev, "mtu", strconv.Itoa(mtu)).CombinedOutput(); err != nil {
			return fmt.Errorf("netlab %s: mtu %d on %s in %s: %w: %s", l.cfg.Prefix, mtu, end.dev, end.ns, err, strings.TrimSpace(string(out)))
		}
	}
	return l.FlushPMTU()
}

// linkAt is link idx of the lab; op names the caller in the error.
func (l *Lab) linkAt(op string, idx int) (*link, error) {
	var lk *link
	for _, k := range l.links {
		if k.idx == idx {
			lk = k
		}
	}
	if lk == nil {
		return nil, fmt.Errorf("netlab %s: %s: link %d out of 0..%d", l.cfg.Prefix, op, idx, l.cfg.Hops)
	}
	return lk, nil
}

// FlushPMTU forgets the path MTUs every namespace of the lab has learned.
func (l *Lab) FlushPMTU() error {
	for _, nd := range l.nodes {
		for _, fam := range []string{"-4", "-6"} {
			if fam == "-6" && !l.cfg.IPv6 {
				continue
			}
			if out, err := nsCommand(nd.name, "ip", fam, "route", "flush", "cache").CombinedOutput(); err != nil {
				return fmt.Errorf("netlab %s: ip %s route flush cache in %s: %w: %s", l.cfg.Prefix, fam, nd.name, err, strings.TrimSpace(string(out)))
			}
		}
	}
	return nil
}
