// Package tsv reads the tab-separated tables the binary embeds (cities,
// carrier prefixes): one record a line, blank lines and '#' comments
// skipped, CR line ends allowed.
package tsv

import (
	"fmt"
	"strings"
)

// Each calls fn with the fields of every record of text, in order, and
// stops at the first error fn returns, which comes back located as
// "name:line: error".
func Each(name, text string, fn func(fields []string) error) error {
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := fn(strings.Split(line, "\t")); err != nil {
			return fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
	}
	return nil
}
