package geo

import (
	"testing"
	"time"
	_ "time/tzdata"
)

// Every city of the table has a zone that loads, and the table names no
// city it does not hold.
func TestEveryCityHasAZone(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Cities() {
		seen[c.Name] = true
		z, ok := Zone(c.Name)
		if !ok {
			t.Errorf("%s: no zone", c.Name)
			continue
		}
		if _, err := time.LoadLocation(z); err != nil {
			t.Errorf("%s: zone %q: %v", c.Name, z, err)
		}
	}
	for name := range zones {
		if !seen[name] {
			t.Errorf("zones names %q, not a city of the table", name)
		}
	}
	if z, _ := Zone("hk"); z != "Asia/Hong_Kong" {
		t.Errorf("Zone(hk) = %q, want Asia/Hong_Kong (aliases resolve)", z)
	}
	if _, ok := Zone("Atlantis"); ok {
		t.Error("Zone(Atlantis) found a zone")
	}
}
