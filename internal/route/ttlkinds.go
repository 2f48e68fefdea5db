package route

import (
	"fmt"
	"strings"
)

// TTLKinds lists TTLs by a kind (the special range a hop's address is in,
// say), in the order added, for notes: a TTL is said once however many of
// its responders (load-balanced paths) are of the kind, and a run of TTLs
// of one kind is one range: "TTL 1 private, 2 cgnat, 9-10 documentation".
type TTLKinds []ttlRange

type ttlRange struct {
	from, to int
	kind     string
}

// Add counts ttl as of kind. TTLs are added in increasing order (a hop
// after another); a TTL already in a range of its kind, or next to one,
// joins it.
func (s *TTLKinds) Add(ttl int, kind string) {
	for i := range *s {
		if r := &(*s)[i]; r.kind == kind && ttl >= r.from && ttl <= r.to+1 {
			r.to = max(r.to, ttl)
			return
		}
	}
	*s = append(*s, ttlRange{ttl, ttl, kind})
}

func (s TTLKinds) String() string {
	parts := make([]string, len(s))
	for i, r := range s {
		if r.from == r.to {
			parts[i] = fmt.Sprintf("%d %s", r.from, r.kind)
		} else {
			parts[i] = fmt.Sprintf("%d-%d %s", r.from, r.to, r.kind)
		}
	}
	return "TTL " + strings.Join(parts, ", ")
}
