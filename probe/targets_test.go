package probe

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestResolveTargetsGuards(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		opt     ExpandOptions
		n       int    // targets expected
		first   string // first target
		wantErr string
	}{
		{"addresses as given", []string{"127.0.0.1", "::1"}, ExpandOptions{}, 2, "127.0.0.1", ""},
		{"a /24 skips network and broadcast", []string{"10.77.1.0/24"}, ExpandOptions{}, 254, "10.77.1.1", ""},
		{"a /31 has two hosts", []string{"10.77.1.0/31"}, ExpandOptions{}, 2, "10.77.1.0", ""},
		{"a /23 needs --allow-large", []string{"10.77.0.0/23"}, ExpandOptions{}, 0, "", "--allow-large"},
		{"a /23 with --allow-large", []string{"10.77.0.0/23"}, ExpandOptions{AllowLarge: true}, 510, "10.77.0.1", ""},
		{"loopback /22 is exempt", []string{"127.0.0.0/22"}, ExpandOptions{}, 1022, "127.0.0.1", ""},
		{"loopback /8 is still too big to hold", []string{"127.0.0.0/8"}, ExpandOptions{}, 0, "", "more than the 65536"},
		{"IPv6 /120 is 256 addresses", []string{"fd77::/120"}, ExpandOptions{}, 256, "fd77::", ""},
		{"IPv6 /64 is refused", []string{"fd77::/64"}, ExpandOptions{AllowLarge: true}, 0, "", "more than the"},
		{"multicast needs a flag", []string{"224.0.0.1"}, ExpandOptions{}, 0, "", "--allow-broadcast"},
		{"limited broadcast needs a flag", []string{"255.255.255.255"}, ExpandOptions{}, 0, "", "--allow-broadcast"},
		{"IPv6 multicast needs a flag", []string{"ff02::1"}, ExpandOptions{}, 0, "", "--allow-broadcast"},
		{"multicast with the flag", []string{"224.0.0.1"}, ExpandOptions{AllowBroadcast: true}, 1, "224.0.0.1", ""},
		{"-4 refuses an IPv6 address", []string{"::1"}, ExpandOptions{Network: "ip4"}, 0, "", "not an IPv4"},
		{"bad CIDR", []string{"10.77.0.0/33"}, ExpandOptions{}, 0, "", "not a CIDR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := ResolveTargets(context.Background(), tc.args, tc.opt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) != tc.n || ts[0].Addr.String() != tc.first {
				t.Errorf("%d targets starting %s, want %d starting %s", len(ts), ts[0].Addr, tc.n, tc.first)
			}
		})
	}
}

func TestScheduleStretchesWhenTheRateCapCannotKeepTheInterval(t *testing.T) {
	tests := []struct {
		n         int
		interval  time.Duration
		rate      float64
		want      time.Duration
		stretched bool
	}{
		{10, time.Second, 100, time.Second, false},              // 10 pps needed
		{100, time.Second, 100, time.Second, false},             // exactly the cap
		{1000, 100 * time.Millisecond, 1000, time.Second, true}, // 10,000 pps needed
		{500, time.Second, 100, 5 * time.Second, true},
	}
	for _, tc := range tests {
		got, st := Schedule(tc.n, PingConfig{Interval: tc.interval, Rate: tc.rate})
		if got != tc.want || st != tc.stretched {
			t.Errorf("%d targets every %s at %g pps: %s %v, want %s %v", tc.n, tc.interval, tc.rate, got, st, tc.want, tc.stretched)
		}
	}
}
