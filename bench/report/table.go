package report

import (
	"strings"
	"unicode/utf8"
)

// table is a markdown table whose columns are padded to their widest
// cell, so it reads aligned in a terminal as well as rendered.
type table struct {
	head  []string
	right []bool // right-align the column (numbers)
	rows  [][]string
}

func (t *table) col(name string, right bool) {
	t.head = append(t.head, name)
	t.right = append(t.right, right)
}

// add appends a row, padded with empty cells to the header's width.
func (t *table) add(cells ...string) {
	for len(cells) < len(t.head) {
		cells = append(cells, "")
	}
	t.rows = append(t.rows, cells)
}

func width(s string) int { return utf8.RuneCountInString(s) }

func (t *table) String() string {
	w := make([]int, len(t.head))
	for i, h := range t.head {
		w[i] = max(width(h), 3)
	}
	for _, r := range t.rows {
		for i, c := range r {
			if i < len(w) {
				w[i] = max(w[i], width(c))
			}
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for i := range t.head {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			pad := strings.Repeat(" ", w[i]-width(c))
			if t.right[i] {
				b.WriteString(" " + pad + c + " |")
			} else {
				b.WriteString(" " + c + pad + " |")
			}
		}
		b.WriteString("\n")
	}
	line(t.head)
	b.WriteString("|")
	for i := range t.head {
		if t.right[i] {
			b.WriteString(strings.Repeat("-", w[i]+1) + ":|")
		} else {
			b.WriteString(strings.Repeat("-", w[i]+2) + "|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		line(r)
	}
	return b.String()
}

// plain renders the table as aligned text without rules, columns two
// spaces apart, as benchstat prints.
func (t *table) plain() string {
	w := make([]int, len(t.head))
	for i, h := range t.head {
		w[i] = width(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			if i < len(w) {
				w[i] = max(w[i], width(c))
			}
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		var parts []string
		for i := range t.head {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			pad := strings.Repeat(" ", w[i]-width(c))
			if t.right[i] {
				parts = append(parts, pad+c)
			} else {
				parts = append(parts, c+pad)
			}
		}
		b.WriteString(strings.TrimRight(strings.Join(parts, "  "), " ") + "\n")
	}
	line(t.head)
	for _, r := range t.rows {
		line(r)
	}
	return b.String()
}
