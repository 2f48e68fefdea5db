package bw

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

// A documentation address is refused before anything is dialed: the injected
// dialer must never be called (nothing is sent anywhere by this test).
func TestRunRefusesDocumentationAddressesBeforeDialing(t *testing.T) {
	for _, host := range []string{"192.0.2.7", "198.51.100.1", "203.0.113.250", "2001:db8::1", "[2001:db8:ffff::9]", "::ffff:192.0.2.1", "2001:db8::1%eth0"} {
		dialed := false
		cfg := Config{Dial: func(context.Context, string, string) (net.Conn, error) {
			dialed = true
			return nil, errors.New("the test dialer refuses everything")
		}}
		_, err := Run(context.Background(), host, cfg)
		if dialed {
			t.Errorf("%s: dialed", host)
		}
		if !errors.Is(err, ErrDocumentation) || !strings.Contains(err.Error(), "documentation address") {
			t.Errorf("%s: err %v, want ErrDocumentation", host, err)
		}
	}
	// Loopback and real-looking neighbours of the ranges pass the check.
	for _, host := range []string{"127.0.0.1", "::1", "192.0.3.1", "198.51.101.1", "2001:db9::1", "localhost"} {
		if err := CheckServer(host); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
}
