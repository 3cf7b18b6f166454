// Package textsafe makes text that came from files (session titles and
// bodies, events.log, config.yaml, lease and lock files: anything a user,
// an agent or another clone wrote) safe to print on a terminal.
//
// What it guarantees: text that went through Line, Text or a Writer
// holds none of
//
//   - C0 control characters (U+0000 to U+001F; Text and Writer keep \n and
//     \t) and DEL (U+007F), which a terminal obeys (ESC starts an escape
//     sequence that can clear the screen, retitle the window or rewrite
//     what was printed before; CR returns to the start of the line);
//   - C1 control characters (U+0080 to U+009F: U+009B is CSI on many
//     terminals);
//   - bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A
//     to U+202E, U+2066 to U+2069), which reorder what is shown so that it
//     reads differently from what it is (U+202E, right-to-left override),
//     and the line and paragraph separators U+2028 and U+2029;
//   - invalid UTF-8.
//
// Each is replaced by a visible escape: \xNN for a C0 control, DEL or a
// byte of invalid UTF-8, \uNNNN for a C1 control or a bidirectional
// character. Everything else, including every other printable Unicode
// character, passes unchanged, so text that was clean prints as it is.
//
// Its limits: it does not make output unambiguous (a title may itself
// contain the four characters `\x1b`), and it does not escape what only
// looks alike (homoglyphs, zero-width spaces other than the marks above).
//
// JSON escapes the same characters inside encoded JSON, as \uNNNN: the
// result is the same JSON value, and safe to show on a terminal.
package textsafe

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// unsafeRune reports whether r must be escaped (\n and \t are decided by
// the caller).
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators: they break a line
		return true
	}
	return false
}

// Line returns s with every unsafe character escaped, newlines and tabs
// too: for a one-line field (a title, an owner, a reason).
func Line(s string) string { return escape(s, false) }

// Text returns s with every unsafe character escaped but newlines and
// tabs: for a body or a multi-line message.
func Text(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	if clean(s, keepLines) {
		return s
	}
	return string(appendEscaped(make([]byte, 0, len(s)+16), []byte(s), keepLines))
}

func clean(s string, keepLines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			continue
		}
		if keepLines && (c == '\n' || c == '\t') {
			continue
		}
		if c < utf8.RuneSelf {
			return false
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return false
		}
		i += size - 1
	}
	return true
}

// appendEscaped appends p to dst, escaped.
func appendEscaped(dst, p []byte, keepLines bool) []byte {
	return appendEscapedDEL(dst, p, keepLines, `\x7f`)
}

// appendEscapedDEL is appendEscaped with del for DEL.
func appendEscapedDEL(dst, p []byte, keepLines bool, del string) []byte {
	for i := 0; i < len(p); {
		c := p[i]
		if c >= 0x20 && c < 0x7f || keepLines && (c == '\n' || c == '\t') {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = fmt.Appendf(dst, `\x%02x`, c)
		case r == 0x7f:
			dst = append(dst, del...)
		case r < 0x20:
			dst = fmt.Appendf(dst, `\x%02x`, r)
		case unsafeRune(r):
			dst = fmt.Appendf(dst, `\u%04x`, r)
		default:
			dst = append(dst, p[i:i+size]...)
		}
		i += size
	}
	return dst
}

// JSON returns encoded JSON with DEL and every C1 control and bidirectional
// character written as a \uNNNN escape (encoding/json leaves them raw; it
// already escapes C0 controls and replaces invalid UTF-8). In JSON these
// characters can only stand inside a string, where the escape means the
// same character.
func JSON(data []byte) []byte {
	if !bytes.ContainsAny(data, "\x7f\u0080\u0081\u0082\u0083\u0084\u0085\u0086\u0087\u0088\u0089\u008a\u008b\u008c\u008d\u008e\u008f\u0090\u0091\u0092\u0093\u0094\u0095\u0096\u0097\u0098\u0099\u009a\u009b\u009c\u009d\u009e\u009f\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069") {
		return data
	}
	out := make([]byte, 0, len(data)+16)
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == 0x7f || r >= 0x80 && unsafeRune(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	return out
}

// A Writer escapes everything written through it as Text does, before it
// reaches w: the net under a command's whole output, so that a field that
// was printed without Line still cannot reach the terminal raw. It writes
// DEL as \u007f, not \x7f: encoding/json leaves DEL raw, and JSON that
// passes through a Writer must stay JSON (its other raw characters can
// only be C1 and bidirectional ones, whose \u escapes JSON reads too). A UTF-8
// sequence split between two writes is held back until it is complete (or
// Flush). It is safe for concurrent use; writes are passed on whole, in
// order.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte // the start of a UTF-8 sequence split by the last write
	buf     []byte
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it to the underlying writer. It reports
// len(p) when everything was passed on (held-back bytes count as written).
func (sw *Writer) Write(p []byte) (int, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	data := p
	if len(sw.pending) > 0 {
		data = append(append([]byte(nil), sw.pending...), p...)
		sw.pending = sw.pending[:0]
	}
	// Hold back an incomplete but possibly valid sequence at the end.
	if n := incompleteTail(data); n > 0 {
		sw.pending = append(sw.pending, data[len(data)-n:]...)
		data = data[:len(data)-n]
	}
	if clean(string(data), true) {
		if _, err := sw.w.Write(data); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	sw.buf = appendEscapedDEL(sw.buf[:0], data, true, `\u007f`)
	if _, err := sw.w.Write(sw.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held back (an incomplete UTF-8 sequence, escaped).
func (sw *Writer) Flush() error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if len(sw.pending) == 0 {
		return nil
	}
	out := appendEscapedDEL(nil, sw.pending, true, `\u007f`)
	sw.pending = sw.pending[:0]
	_, err := sw.w.Write(out)
	return err
}

// incompleteTail returns how many bytes at the end of p start a UTF-8
// sequence that more bytes could complete (0 if none).
func incompleteTail(p []byte) int {
	for n := 1; n <= 3 && n <= len(p); n++ {
		c := p[len(p)-n]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // a leading byte: is the sequence short?
			need := 0
			switch {
			case c >= 0xf0:
				need = 4
			case c >= 0xe0:
				need = 3
			default:
				need = 2
			}
			if n < need {
				return n
			}
			return 0
		}
	}
	return 0
}
