package tui

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"
)

// Styles are every style of the UI, in one place. Meaning never rests on
// colour alone: pass/fail, the cheapest marker, flags and the selection
// also show as text (✓ ✗ * RL ›), so NO_COLOR and monochrome terminals lose
// nothing.
type Styles struct {
	Title    lipgloss.Style
	Header   lipgloss.Style
	Selected lipgloss.Style
	Dim      lipgloss.Style
	Pass     lipgloss.Style
	Fail     lipgloss.Style
	Warn     lipgloss.Style
	Cheapest lipgloss.Style
	Status   lipgloss.Style
	Key      lipgloss.Style
	Spark    lipgloss.Style
	ChartIn  lipgloss.Style
	ChartOut lipgloss.Style
	Level    lipgloss.Style
	Commit   lipgloss.Style
	Axis     lipgloss.Style
	// Mono is the monochrome set (NO_COLOR): charts then tell series
	// apart by glyph.
	Mono bool

	// affixes are what Render puts around one line of text, per styleID
	// (set by NewStyles; a Styles built otherwise renders through lipgloss).
	affixes *[styleCount]affix
}

// styleID names one of the Styles for the tables' cells, which are
// memoised apart from any one copy of the Styles.
type styleID uint8

// The styles a table cell can have; styleNone is unstyled.
const (
	styleNone styleID = iota
	styleDim
	stylePass
	styleFail
	styleWarn
	styleCheapest
	styleSpark
	styleSelected
	styleHeader
	styleTitle
	styleStatus
	styleCount
)

// get returns the style of id (nil for styleNone).
func (st *Styles) get(id styleID) *lipgloss.Style {
	switch id {
	case styleDim:
		return &st.Dim
	case stylePass:
		return &st.Pass
	case styleFail:
		return &st.Fail
	case styleWarn:
		return &st.Warn
	case styleCheapest:
		return &st.Cheapest
	case styleSpark:
		return &st.Spark
	case styleSelected:
		return &st.Selected
	case styleHeader:
		return &st.Header
	case styleTitle:
		return &st.Title
	case styleStatus:
		return &st.Status
	}
	return nil
}

// affix is the escape sequences a style writes before and after a line.
type affix struct {
	pre, post string
}

// render is st.get(id).Render(s) for a cell or a table line: the style's
// sequences around s, found once by NewStyles, instead of lipgloss working
// out the style for every cell of every frame. Text with a tab or a line
// break goes through lipgloss (it converts and splits them);
// TestStyleRenderMatchesLipgloss checks the two agree.
func (st *Styles) render(id styleID, s string) string {
	if id == styleNone {
		return s
	}
	if st.affixes == nil || strings.ContainsAny(s, "\t\r\n") {
		return st.get(id).Render(s)
	}
	a := st.affixes[id]
	return a.pre + s + a.post
}

// NewStyles returns the styles; color false gives the monochrome set.
func NewStyles(colour bool) Styles {
	c := func(s string) color.Color {
		if !colour {
			return lipgloss.NoColor{}
		}
		return lipgloss.Color(s)
	}
	base := lipgloss.NewStyle()
	st := Styles{
		Title:    base.Bold(true).Foreground(c("#7DCFFF")),
		Header:   base.Bold(true).Foreground(c("#A9B1D6")),
		Selected: base.Reverse(true),
		Dim:      base.Foreground(c("#737AA2")),
		Pass:     base.Foreground(c("#9ECE6A")),
		Fail:     base.Bold(true).Foreground(c("#F7768E")),
		Warn:     base.Foreground(c("#E0AF68")),
		Cheapest: base.Bold(true).Foreground(c("#9ECE6A")),
		Status:   base.Foreground(c("#A9B1D6")),
		Key:      base.Bold(true).Foreground(c("#BB9AF7")),
		Spark:    base.Foreground(c("#7AA2F7")),
		ChartIn:  base.Foreground(c("#9ECE6A")),
		ChartOut: base.Foreground(c("#7AA2F7")),
		Level:    base.Foreground(c("#F7768E")),
		Commit:   base.Foreground(c("#E0AF68")),
		Axis:     base.Foreground(c("#565F89")),
		Mono:     !colour,
	}
	var aff [styleCount]affix
	for id := styleNone + 1; id < styleCount; id++ {
		// None of these styles pads, aligns, wraps or borders: one line of
		// text comes out between the same two sequences, whatever it is.
		out := st.get(id).Render("x")
		i := strings.IndexByte(out, 'x')
		aff[id] = affix{pre: out[:i], post: out[i+1:]}
	}
	st.affixes = &aff
	return st
}

// newStylesPtr is NewStyles for a Model, which holds its styles by pointer:
// the model is copied at every message, the styles (10 KB) never change.
func newStylesPtr(colour bool) *Styles {
	st := NewStyles(colour)
	return &st
}
