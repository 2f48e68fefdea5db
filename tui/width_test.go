package tui

import (
	"math/rand/v2"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

// TestTextWidthMatchesLipgloss checks the fast width against lipgloss over
// every rune narrowRune accepts, on its own and between others, and over
// random mixes of ASCII, SGR sequences, the UI's symbols and runes it must
// hand to lipgloss (wide, combining, emoji, control, other escapes).
func TestTextWidthMatchesLipgloss(t *testing.T) {
	for r := rune(0); r < 0x30000; r++ {
		if !narrowRune(r) {
			continue
		}
		for _, s := range []string{string(r), "a" + string(r) + "b", string(r) + string(r), "\x1b[1m" + string(r) + "\x1b[m"} {
			if got, want := textWidth(s), lipgloss.Width(s); got != want {
				t.Fatalf("%q (U+%04X): textWidth %d, lipgloss.Width %d", s, r, got, want)
			}
		}
	}
	pieces := []string{"a", "Z", " ", "0", "~", "·", "×", "…", "›", "•", "⇄", "→", "←", "↑", "↓", "≤", "≥", "─", "┄", "═",
		"╌", "▁", "█", "⣿", "⠁", "✓", "✗", "\x1b[1;38;2;125;207;255m", "\x1b[m", "\x1b[7m", "\x1b[38;5;12m",
		"中", "한", "é", "e\u0301", "\u0301", "👍", "👍🏽", "❤\ufe0f", "🇨🇳", "\u200d", "\t", "\n", "\x1b]8;;x\x07", "\x1b", "\x7f", "\u00ad"}
	rng := rand.New(rand.NewPCG(14, 2))
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		for k := rng.IntN(12); k >= 0; k-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		if got, want := textWidth(s), lipgloss.Width(s); got != want {
			t.Fatalf("%q: textWidth %d, lipgloss.Width %d", s, got, want)
		}
	}
}

// TestStyleRenderMatchesLipgloss checks the styles' precomputed sequences
// against lipgloss rendering the same text, colour and monochrome, over the
// cells and lines the tables write (plain, styled already, empty, with
// tabs and line breaks, which go through lipgloss).
func TestStyleRenderMatchesLipgloss(t *testing.T) {
	texts := []string{"", " ", "x", "pass", "FAIL", "  41.0/52.3", "▁▂▃█×▅", "…", "hk-cn2-gia⇄",
		"\x1b[1mbold\x1b[m then plain", "a\tb", "two\nlines", "cr\r\nlf", "中文 wide", "e\u0301"}
	for _, colour := range []bool{true, false} {
		st := NewStyles(colour)
		for id := styleNone; id < styleCount; id++ {
			for _, s := range texts {
				want := s
				if p := st.get(id); p != nil {
					want = p.Render(s)
				}
				if got := st.render(id, s); got != want {
					t.Errorf("colour %v style %d %q: got %q, lipgloss %q", colour, id, s, got, want)
				}
			}
		}
	}
}
