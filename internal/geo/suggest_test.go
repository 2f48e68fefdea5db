package geo

import (
	"slices"
	"testing"
)

func TestEditDistanceTextbookPairs(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"kitten", "sitting", 3}, // k→s, e→i, +g
		{"flaw", "lawn", 2},      // -f, +n
		{"", "abc", 3},
		{"abc", "abc", 0},
		{"香港", "香", 1}, // runes, not bytes
	} {
		if got := editDistance([]rune(c.a), []rune(c.b)); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestSuggestCitiesNearestFirst(t *testing.T) {
	for _, c := range []struct {
		in, first string
	}{
		{"Shangai", "Shanghai"},     // one h missing
		{"Singapor", "Singapore"},   // one e missing
		{"Hong-Kongg", "Hong Kong"}, // folded "hongkongg", one g too many
		{"Tokio", "Tokyo"},          // i for y
	} {
		got := SuggestCities(c.in, 3)
		if len(got) != 3 || got[0] != c.first {
			t.Errorf("SuggestCities(%q) = %v, want %s first of 3", c.in, got, c.first)
		}
		if u := slices.Compact(slices.Sorted(slices.Values(got))); len(u) != len(got) {
			t.Errorf("SuggestCities(%q) = %v: a city twice", c.in, got)
		}
	}
}
