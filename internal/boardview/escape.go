package boardview

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Clean makes agent-written text (titles, tags, owners, errors, log
// lines) safe to put on a terminal: no byte of it can move the cursor,
// clear the screen, set the title or the clipboard, or reorder what is
// around it. It writes, visibly:
//
//   - C0 controls and DEL (ESC, BEL, CR, LF, ...) as \xNN (a tab as one
//     space): ESC starts every CSI, OSC (title, OSC 52 clipboard) and DCS
//     sequence, so none can begin;
//   - C1 controls (U+0080–U+009F, the 8-bit CSI and OSC among them) as
//     \u0085;
//   - bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E,
//     U+200F, U+061C) and the line and paragraph separators U+2028 and
//     U+2029 as \u202e: they would reorder or break the line around them;
//   - each byte that is not UTF-8 as \xNN.
//
// Everything else (CJK, emoji, accents) is kept as it is.
func Clean(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	writeClean(&b, s, false)
	return b.String()
}

// CleanText is Clean for a file shown whole: it keeps line breaks and
// expands tabs to four spaces.
func CleanText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	writeClean(&b, s, true)
	return b.String()
}

func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

func writeClean(b *strings.Builder, s string, text bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\t' && text:
				b.WriteString("    ")
			case c == '\t':
				b.WriteByte(' ')
			case c == '\n' && text:
				b.WriteByte('\n')
			case c < 0x20 || c == 0x7f:
				fmt.Fprintf(b, `\x%02x`, c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(b, `\x%02x`, c)
		case unsafeRune(r):
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
}

// unsafeRune reports the runes beyond ASCII that Clean escapes.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0x200e, r == 0x200f, r == 0x061c: // bidirectional controls
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}
