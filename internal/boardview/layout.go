package boardview

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// fit pads or cuts s (clean text, no escape sequences) to exactly w
// columns, counting wide characters (CJK, emoji) as two.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = ansi.StringWidth(s)
	}
	if n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// column is one column of a table: its header, and when the table is too
// narrow, which columns go first (higher drop goes first; 0 never).
type column struct {
	name string
	max  int // its widest; 0: as wide as its widest cell
	drop int
	flex bool // takes the width that is left (at least minFlex)
}

const minFlex = 12

// table lays rows of cells out in width columns: each column as wide as
// its widest cell (at most max), the flexible one taking what is left;
// columns are dropped, the highest drop first, until the rest fits. It
// returns the header and the lines.
func table(width int, cols []column, rows [][]string) (string, []string) {
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = ansi.StringWidth(c.name)
		for _, r := range rows {
			widths[i] = max(widths[i], ansi.StringWidth(r[i]))
		}
		if c.max > 0 {
			widths[i] = min(widths[i], c.max)
		}
	}
	keep := make([]bool, len(cols))
	for i := range keep {
		keep[i] = true
	}
	total := func() int {
		n := 0
		for i, c := range cols {
			if !keep[i] {
				continue
			}
			if c.flex {
				n += minFlex
			} else {
				n += widths[i]
			}
			n += 2
		}
		return n
	}
	for total() > width {
		worst := -1
		for i, c := range cols {
			if keep[i] && c.drop > 0 && (worst < 0 || c.drop > cols[worst].drop) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		keep[worst] = false
	}
	// The flexible column gets what the others leave; without one, the
	// last column does.
	flex := -1
	for i, c := range cols {
		if keep[i] && c.flex {
			flex = i
		}
	}
	if flex >= 0 {
		used := 0
		for i := range cols {
			if keep[i] && i != flex {
				used += widths[i] + 2
			}
		}
		widths[flex] = max(width-used, 1)
	}
	line := func(cells []string) string {
		var b strings.Builder
		first := true
		for i := range cols {
			if !keep[i] {
				continue
			}
			if !first {
				b.WriteString("  ")
			}
			first = false
			b.WriteString(fit(cells[i], widths[i]))
		}
		return fit(b.String(), width)
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = line(r)
	}
	return line(names), lines
}
