package main

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/probe"
)

// ping (and ping --watch) refuse documentation addresses while resolving,
// before any socket opens: pingResolve is pure (the lookup is injected), so
// nothing is sent or resolved by this test.
func TestPingResolveRefusesDocumentationAddresses(t *testing.T) {
	lookup := func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if host == "example.test" {
			return []netip.Addr{netip.MustParseAddr("203.0.113.7")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	for _, tc := range []struct{ arg, want string }{
		{"192.0.2.1", "192.0.2.1 is a documentation address (192.0.2.0/24)"},
		{"198.51.100.0/30", "is a documentation address (198.51.100.0/24)"},
		{"2001:db8::7", "2001:db8::7 is a documentation address (2001:db8::/32)"},
		{"example.test", "example.test (203.0.113.7) is a documentation address (203.0.113.0/24)"},
	} {
		_, err := pingResolve(context.Background(), []string{"127.0.0.1", tc.arg}, probe.ExpandOptions{}, lookup)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "never probes it") {
			t.Errorf("%s: err %v, want %q", tc.arg, err, tc.want)
		}
	}
	// Loopback and a name resolving to it stay probeable.
	rs, err := pingResolve(context.Background(), []string{"127.0.0.1", "::1", "localhost.test"}, probe.ExpandOptions{}, lookup)
	if err != nil || len(rs.targets) != 3 {
		t.Fatalf("loopback: %v %+v", err, rs)
	}
}

// trace and trace --watch are refused by probe's gate before probe.Trace
// opens its sockets (probe's TestTraceRefusesDocumentationAddressesBeforeAnySocket).
func TestTraceTargetRefusesDocumentationAddresses(t *testing.T) {
	// The command refuses with exit 2 before it probes; a watch does not
	// create its journal.
	var errb bytes.Buffer
	testIO.SetErr(&errb)
	defer testIO.SetErr(nil)
	for _, args := range [][]string{{"trace", "192.0.2.9"}, {"trace", "--watch", "--watch-cycles", "1", "203.0.113.1"}} {
		errb.Reset()
		if _, code := prRun(t, args...); code != 2 || !strings.Contains(errb.String(), args[len(args)-1]+" is a documentation address") {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, errb.String())
		}
	}
	j := filepath.Join(t.TempDir(), "trace.ndjson")
	errb.Reset()
	if _, code := prRun(t, "trace", "--watch", "--journal", j, "2001:db8::9"); code != 2 || !strings.Contains(errb.String(), "2001:db8::9 is a documentation address (2001:db8::/32)") {
		t.Errorf("trace --watch --journal: exit %d\n%s", code, errb.String())
	}
	if _, err := os.Stat(j); !os.IsNotExist(err) {
		t.Errorf("the refused watch created its journal: %v", err)
	}
}
