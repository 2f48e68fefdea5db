package main

import (
	"github.com/linecheck/linecheck/internal/privsep"
	"github.com/linecheck/linecheck/probe"
)

// separatePrivileges is set by main only: a command run in-process by a
// test must never re-execute the test binary.
var separatePrivileges bool

// keepPrivilegesInHelper is the first thing serve, backtrace and tui do:
// with capabilities (root, or cap_net_raw+ep), raw sockets come from a
// helper process holding CAP_NET_RAW alone, and the command re-executes
// itself holding none (internal/privsep), so its HTTP server, reloader and
// screens never run with a privilege.
func keepPrivilegesInHelper() error {
	if !separatePrivileges {
		return nil
	}
	open, err := privsep.Separate()
	if err != nil {
		return err
	}
	if open != nil {
		probe.SetDefaultSocketFunc(probe.SocketFunc(open))
	}
	return nil
}
