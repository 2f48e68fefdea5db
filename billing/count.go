package billing

import "strconv"

// Count writes n with its noun in the number it takes: "1 item", "3 items",
// "0 items". plural is the noun for n ≠ 1 ("" adds an s to singular).
func Count(n int, singular, plural string) string {
	if plural == "" {
		plural = singular + "s"
	}
	if n == 1 || n == -1 {
		return strconv.Itoa(n) + " " + singular
	}
	return strconv.Itoa(n) + " " + plural
}
