package tui

import (
	"image/color"

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
	return Styles{
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
}
