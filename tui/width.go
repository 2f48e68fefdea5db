package tui

import (
	"unicode/utf8"

	"charm.land/lipgloss/v2"
)

// textWidth is lipgloss.Width(s) (the terminal columns s takes) without
// segmenting it into grapheme clusters when it holds only what the UI
// writes itself: printable ASCII, SGR escape sequences and the one-column
// symbols of narrowRune. Measuring every cell and line of a frame by
// grapheme clusters was a quarter of a 200-column frame. Anything else (a
// wide or combining rune, a control character, another escape sequence, a
// second line) is measured by lipgloss.
func textWidth(s string) int {
	w := 0
	for i := 0; i < len(s); {
		b := s[i]
		switch {
		case b >= 0x20 && b < 0x7f:
			w++
			i++
		case b == 0x1b:
			n := csiLen(s[i:])
			if n == 0 {
				return lipgloss.Width(s)
			}
			i += n
		case b < utf8.RuneSelf:
			return lipgloss.Width(s) // a control character
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if !narrowRune(r) {
				return lipgloss.Width(s)
			}
			w++
			i += n
		}
	}
	return w
}

// csiLen is the length of the CSI sequence (ESC [ parameters intermediates
// final) at the start of s; 0 when s does not start with a complete one.
func csiLen(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	i := 2
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
		i++
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		return i + 1
	}
	return 0
}

// narrowRune reports whether r is one of the symbols the UI draws with
// that take one column on their own and never join a neighbour into one
// grapheme cluster: Latin-1 signs (· ×), punctuation (… › •), arrows,
// mathematical operators (≤ ≥), box drawing, block elements, geometric
// shapes, dingbat check marks and braille. TestTextWidthMatchesLipgloss
// checks every one against lipgloss.
func narrowRune(r rune) bool {
	switch {
	case r == 0xb7 || r == 0xd7: // · ×
		return true
	case r >= 0x2010 && r <= 0x2027: // dashes, quotes, bullets, …
		return true
	case r >= 0x2039 && r <= 0x203a: // ‹ ›
		return true
	case r >= 0x2190 && r <= 0x21ff: // arrows
		return true
	case r >= 0x2200 && r <= 0x22ff: // mathematical operators
		return !(r == 0x2223 || r == 0x2225) // not in every width table alike
	case r >= 0x2500 && r <= 0x25ff: // box drawing, block elements, geometric shapes
		return r != 0x25fd && r != 0x25fe // ◽ ◾ are emoji, two columns
	case r == 0x2713 || r == 0x2717: // ✓ ✗
		return true
	case r >= 0x2800 && r <= 0x28ff: // braille
		return true
	}
	return false
}
