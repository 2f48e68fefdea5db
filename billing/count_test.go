package billing

import "testing"

func TestCountAgreesWithItsNumber(t *testing.T) {
	for _, tc := range []struct {
		n                int
		singular, plural string
		want             string
	}{
		{0, "item", "", "0 items"},
		{1, "item", "", "1 item"},
		{2, "item", "", "2 items"},
		{1, "day", "", "1 day"},
		{31, "day", "", "31 days"},
		{1, "entry", "entries", "1 entry"},
		{5, "entry", "entries", "5 entries"},
	} {
		if got := Count(tc.n, tc.singular, tc.plural); got != tc.want {
			t.Errorf("Count(%d, %q, %q) = %q, want %q", tc.n, tc.singular, tc.plural, got, tc.want)
		}
	}
}
