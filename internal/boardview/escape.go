package boardview

import (
	"strings"

	"github.com/pickup-dev/pickup/internal/textsafe"
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
// Everything else (CJK, emoji, accents) is kept as it is. The rules are
// pickup's one set, internal/textsafe's, with tabs made spaces.
func Clean(s string) string {
	return textsafe.Line(strings.ReplaceAll(s, "\t", " "))
}

// CleanText is Clean for a file shown whole: it keeps line breaks and
// expands tabs to four spaces.
func CleanText(s string) string {
	return textsafe.Text(strings.ReplaceAll(s, "\t", "    "))
}
