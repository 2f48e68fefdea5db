package route

import "testing"

// Hand-written: a TTL is said once per kind, neighbouring TTLs of a kind
// make a range, and kinds keep the order they first came in.
func TestTTLKindsSayEachTTLOnceAndRunsAsRanges(t *testing.T) {
	var k TTLKinds
	for _, a := range []struct {
		ttl  int
		kind string
	}{{1, "private"}, {2, "private"}, {2, "private"}, {3, "cgnat"}, {5, "documentation"}, {6, "documentation"}, {6, "private"}, {6, "documentation"}} {
		k.Add(a.ttl, a.kind)
	}
	if got, want := k.String(), "TTL 1-2 private, 3 cgnat, 5-6 documentation, 6 private"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
