package geo

import (
	"slices"
)

// SuggestCities names the n cities of the embedded table nearest to name by
// edit distance (Levenshtein, over the folded names and aliases, as City
// compares them), nearest first, ties in table order: what an unknown city
// is refused with ("Hongkong" finds Hong Kong, "Shangai" Shanghai).
func SuggestCities(name string, n int) []string {
	loadCities()
	key := []rune(cityKey(name))
	best := map[string]int{}
	for k, loc := range cityIndex {
		d := editDistance(key, []rune(k))
		if b, ok := best[loc.Name]; !ok || d < b {
			best[loc.Name] = d
		}
	}
	order := map[string]int{}
	for i, loc := range cityList {
		order[loc.Name] = i
	}
	names := make([]string, 0, len(best))
	for nm := range best {
		names = append(names, nm)
	}
	slices.SortFunc(names, func(a, b string) int {
		if best[a] != best[b] {
			return best[a] - best[b]
		}
		return order[a] - order[b]
	})
	return names[:min(n, len(names))]
}

// editDistance is the Levenshtein distance between a and b (insertions,
// deletions and substitutions of one rune each cost 1).
func editDistance(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
