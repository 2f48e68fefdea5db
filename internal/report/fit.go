package report

import (
	"io"
	"slices"
	"strconv"
	"strings"
)

// writeFitted renders t as text in at most maxW columns: the title and
// notes wrap at word boundaries; when the grid is wider, the columns named
// in t.Movable (then more from the right) move out of the grid into a
// detail block, one wrapped line per row that has any of them.
func writeFitted(w io.Writer, t Table, maxW int) error {
	keep, moved := fitColumns(t, maxW)
	grid := keptGrid(t, keep)
	var b strings.Builder
	for _, l := range Wrap(t.Title, maxW, "") {
		b.WriteString(l + "\n")
	}
	if err := writeText(&b, grid); err != nil {
		return err
	}
	if detail := movedDetail(t, keep, moved, len(grid.Headers), maxW); len(detail) > 0 {
		var names []string
		for _, i := range moved {
			names = append(names, t.Headers[i])
		}
		head := "details (" + strings.Join(names, ", ") + " do not fit in " + strconv.Itoa(maxW) + " columns; --wide keeps them in the table):"
		for _, l := range Wrap(head, maxW, "") {
			b.WriteString(l + "\n")
		}
		for _, l := range detail {
			b.WriteString(l + "\n")
		}
	}
	for _, n := range t.Notes {
		for _, l := range Wrap(n, maxW, "  ") {
			b.WriteString(l + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fitColumns chooses the columns that stay in the grid: keep[i] for each
// header, and moved, the indexes (ascending) that leave it, the Movable ones
// first, then from the right, until the grid fits in maxW. The first column
// always stays.
func fitColumns(t Table, maxW int) (keep []bool, moved []int) {
	keep = make([]bool, len(t.Headers))
	widths := make([]int, len(t.Headers))
	for i, h := range t.Headers {
		keep[i] = true
		widths[i] = width(h)
		for _, r := range t.Rows {
			if i < len(r) && width(r[i]) > widths[i] {
				widths[i] = width(r[i])
			}
		}
	}
	total := func() int {
		n, cols := 0, 0
		for i, k := range keep {
			if k {
				n += widths[i]
				cols++
			}
		}
		if cols > 1 {
			n += 2 * (cols - 1)
		}
		return n
	}
	var order []int
	for _, name := range t.Movable {
		if i := slices.Index(t.Headers, name); i > 0 {
			order = append(order, i)
		}
	}
	for i := len(t.Headers) - 1; i > 0; i-- {
		if !slices.Contains(order, i) {
			order = append(order, i)
		}
	}
	for _, i := range order {
		if total() <= maxW {
			break
		}
		keep[i] = false
		moved = append(moved, i)
	}
	slices.Sort(moved)
	return keep, moved
}

// keptGrid is t with only the kept columns.
func keptGrid(t Table, keep []bool) Table {
	grid := Table{HideEmpty: t.HideEmpty, Bare: t.Bare}
	for i, h := range t.Headers {
		if keep[i] {
			grid.Headers = append(grid.Headers, h)
			grid.Align += string(t.align(i))
		}
	}
	for _, r := range t.Rows {
		var row []string
		for i := range t.Headers {
			if keep[i] {
				row = append(row, cell(r, i))
			}
		}
		grid.Rows = append(grid.Rows, row)
	}
	return grid
}

// movedDetail is the detail block's lines: per row that has any moved
// figure, the row's name and its moved cells, wrapped to maxW; gridCols is
// how many columns stayed in the grid.
func movedDetail(t Table, keep []bool, moved []int, gridCols, maxW int) []string {
	if len(moved) == 0 {
		return nil
	}
	var detail []string
	key := ""
	for _, r := range t.Rows {
		// A row without its own first cell continues the row above
		// (trace: further responders of one TTL).
		if c := cell(r, 0); c != "" {
			key = c
		}
		var parts []string
		for _, i := range moved {
			// "-" (no figure) is left out: the block lists what is known.
			if c := cell(r, i); c != "" && c != "-" {
				parts = append(parts, t.Headers[i]+" "+c)
			}
		}
		if len(parts) == 0 {
			continue
		}
		label := key
		// Name the row by its second kept column too when the first
		// does not tell rows apart (several responders at one TTL).
		if gridCols > 1 && cell(r, 0) == "" {
			for i := 1; i < len(t.Headers); i++ {
				if keep[i] {
					label += " " + cell(r, i)
					break
				}
			}
		}
		detail = append(detail, Wrap("  "+label+": "+strings.Join(parts, ", "), maxW, "      ")...)
	}
	return detail
}

func cell(r []string, i int) string {
	if i < len(r) {
		return r[i]
	}
	return ""
}

// Wrap breaks s into lines of at most maxW display columns at spaces;
// continuation lines start with indent. A word longer than a line is cut
// (it cannot be broken anywhere better). Existing newlines are kept.
func Wrap(s string, maxW int, indent string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		lead := ""
		// Keep the paragraph's own leading spaces on its first line.
		for strings.HasPrefix(para, " ") {
			lead += " "
			para = para[1:]
		}
		line = lead
		empty := true
		for _, word := range strings.Fields(para) {
			for width(word) > maxW-width(indent) && maxW-width(indent) > 0 {
				// Cut an overlong word at the space left (at least one rune).
				room := maxW - width(line)
				if !empty {
					room--
				}
				if room < 1 {
					out = append(out, line)
					line, empty = indent, true
					continue
				}
				head, tail := cutWidth(word, room)
				if !empty {
					line += " "
				}
				out = append(out, line+head)
				line, empty, word = indent, true, tail
			}
			switch {
			case empty:
				line += word
				empty = false
			case width(line)+1+width(word) <= maxW:
				line += " " + word
			default:
				out = append(out, line)
				line = indent + word
			}
		}
		out = append(out, line)
	}
	return out
}

// cutWidth splits s after as many runes as fit in n columns (at least one).
func cutWidth(s string, n int) (string, string) {
	w := 0
	for i, r := range s {
		rw := width(string(r))
		if w+rw > n && i > 0 {
			return s[:i], s[i:]
		}
		w += rw
	}
	return s, ""
}
