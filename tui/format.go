package tui

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
)

// fit pads or truncates s (which may hold ANSI) to exactly w cells.
func fit(s string, w int, right bool) string {
	if w <= 0 {
		return ""
	}
	sw := textWidth(s)
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	pad := strings.Repeat(" ", w-sw)
	if right {
		return pad + s
	}
	return s + pad
}

// line truncates s to the width; no padding. A cut falls between words
// (then "…"), not inside one, unless the last word would take more than
// half the line.
func line(s string, w int) string {
	// No character is wider on a terminal than its UTF-8 bytes: a line that
	// has no more bytes than columns fits without measuring it.
	if len(s) <= w {
		return s
	}
	if textWidth(s) <= w {
		return s
	}
	if w < 2 {
		return ansi.Truncate(s, w, "…")
	}
	head := ansi.Truncate(s, w-1, "")
	plainHead, plain := ansi.Strip(head), ansi.Strip(s)
	if next := plain[len(plainHead):]; next == "" || next[0] == ' ' {
		return head + "…"
	}
	if i := strings.LastIndexByte(head, ' '); i > len(head)/2 {
		cut := strings.TrimRight(head[:i], " ") + " …"
		if strings.Contains(s, "\x1b[") {
			cut += "\x1b[m" // a style opened before the cut ends with it
		}
		return cut
	}
	return head + "…"
}

// byteCount finds a raw byte count in a rule text ("50321534393 bytes");
// compiled on first use, not in the init every linecheck command runs.
var byteCount = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(\d{4,}) bytes\b`) })

// volumeUnits writes the byte counts of a billing rule text in units
// (50.32 TB): a person compares volumes, not eleven-digit numbers.
func volumeUnits(s string) string {
	return byteCount().ReplaceAllStringFunc(s, func(m string) string {
		n, err := strconv.ParseFloat(strings.TrimSuffix(m, " bytes"), 64)
		if err != nil {
			return m
		}
		return billing.HumanBytes(n)
	})
}

// wrapLines breaks s at sep (" " between words, "  " between the items of
// a list) into at most n lines of width w (the last one cut by line);
// continuation lines start with indent.
func wrapLines(s string, w, n int, indent, sep string) []string {
	var out []string
	rest := s
	for len(out) < n-1 && textWidth(rest) > w {
		head := ansi.Truncate(rest, w, "")
		i := strings.LastIndex(head, sep)
		if i <= len(indent) {
			break
		}
		out = append(out, strings.TrimRight(head[:i], " "))
		rest = indent + strings.TrimLeft(rest[i:], " ")
	}
	return append(out, line(rest, w))
}

// ms formats a duration in milliseconds for a narrow column.
func ms(v float64) string {
	switch {
	case math.IsNaN(v) || v < 0:
		return "-"
	case v < 1:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// moneyText formats an exact amount with two decimals and thousands
// separators, without going through a float.
func moneyText(m billing.Money) string {
	if !m.Valid() {
		return "-"
	}
	ip, fp, _ := strings.Cut(m.Amount.StringFixed(2), ".")
	return billing.GroupThousands(ip) + "." + fp
}

// moneyOf is an amount billing wrote as a decimal string, as
// billing.Money: parsed once, here at the edge; "" (not priced) or text
// that is no decimal is no amount (the zero Money).
func moneyOf(amount, currency string) billing.Money {
	d, err := decimal.NewFromString(strings.TrimSpace(amount))
	if err != nil {
		return billing.Money{}
	}
	return billing.MoneyOf(d, currency)
}

// amountFloat is m as a float, for ordering and compact display only; NaN
// without an amount.
func amountFloat(m billing.Money) float64 {
	if !m.Valid() {
		return math.NaN()
	}
	return m.Amount.InexactFloat64()
}

// moneyWhole formats an amount in whole units (rounded half up) with separators.
func moneyWhole(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return billing.GroupThousands(fmt.Sprintf("%.0f", math.Round(f)))
}

// moneyCompact formats an amount in at most 6 cells: 2571, 23.4k, 1.23M.
func moneyCompact(f float64) string {
	a := math.Abs(f)
	switch {
	case math.IsNaN(f):
		return "-"
	case a < 10000:
		return fmt.Sprintf("%.0f", f)
	case a < 999950:
		return fmt.Sprintf("%.1fk", f/1000)
	default:
		return fmt.Sprintf("%.2fM", f/1e6)
	}
}

// mbps formats a rate in Mbps.
func mbps(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0")
}

// scaleText formats the traffic scale factor: ×1, ×1.25.
func scaleText(s float64) string {
	return "×" + strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", s), "0"), ".")
}

// ansiStrip removes escape sequences (golden files hold the plain text).
func ansiStrip(s string) string { return ansi.Strip(s) }

func fmtInt(i int) string { return fmt.Sprint(i) }

// lipglossWidth is the number of terminal columns s takes (wide runes two,
// escape sequences none), as lipgloss.Width counts them: the one width
// every cell is fitted with.
func lipglossWidth(s string) int { return lipgloss.Width(s) }
