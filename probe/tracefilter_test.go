package probe

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
)

// The raw TCP socket's filter, run in x/net/bpf's VM on segments built
// here: it keeps exactly the segments from the target's port to the run's
// source ports, behind an IPv4 header of any length or none (IPv6 raw
// sockets see the TCP header first).
func TestTCPReplyFilterKeepsOnlyThisRunsPorts(t *testing.T) {
	const port, base, flows = 443, 30000, 4
	segment := func(ihl int, sport, dport uint16) []byte {
		b := make([]byte, ihl*4+20)
		if ihl > 0 {
			b[0] = 0x40 | byte(ihl)
		}
		binary.BigEndian.PutUint16(b[ihl*4:], sport)
		binary.BigEndian.PutUint16(b[ihl*4+2:], dport)
		return b
	}
	for _, v6 := range []bool{false, true} {
		vm, err := bpf.NewVM(tcpReplyFilter(v6, port, base, flows))
		if err != nil {
			t.Fatal(err)
		}
		ihls := []int{5, 6, 15} // no options, one word, the most
		if v6 {
			ihls = []int{0}
		}
		for _, ihl := range ihls {
			for _, c := range []struct {
				sport, dport uint16
				keep         bool
			}{
				{port, base, true}, {port, base + flows - 1, true},
				{port, base - 1, false}, {port, base + flows, false},
				{port + 1, base, false}, {base, port, false}, // our own SYN, seen coming in
				{80, 51234, false},
			} {
				n, err := vm.Run(segment(ihl, c.sport, c.dport))
				if err != nil {
					t.Fatal(err)
				}
				if (n > 0) != c.keep {
					t.Errorf("v6 %v, IPv4 header of %d words: %d→%d kept %v, want %v", v6, ihl, c.sport, c.dport, n > 0, c.keep)
				}
			}
		}
	}
}
