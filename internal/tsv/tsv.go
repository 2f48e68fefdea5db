// Package tsv reads the tab-separated tables the binary embeds (cities,
// carrier prefixes): one record a line, blank lines and '#' comments
// skipped, CR line ends allowed.
package tsv

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
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

// Quote is a field s quoted for a message (here and in the other readers
// of input files), cut to 40 characters; data that is not
// text (invalid UTF-8, control characters) is said to be so rather than
// echoed.
func Quote(s string) string {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
		return fmt.Sprintf("(%d bytes of binary data, not text)", len(s))
	}
	if utf8.RuneCountInString(s) > 40 {
		r := []rune(s)
		return strconv.Quote(string(r[:40])) + "…"
	}
	return strconv.Quote(s)
}

// ScanError words a bufio.Scanner error met at line of name: a line over
// the scanner's limit (bufio.ErrTooLong, "token too long") says how long a
// line may be; others come back located. limit is the scanner's maximum
// line in bytes.
func ScanError(name string, line, limit int, err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("%s:%d: line longer than %s: a record is one line of text; is it the right file?", name, line, sizeText(limit))
	}
	return fmt.Errorf("%s:%d: %w", name, line, err)
}

// sizeText is n bytes in KiB or MiB when it is a whole number of them.
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
