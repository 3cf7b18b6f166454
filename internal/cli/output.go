package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pickup-dev/pickup/sessions"
)

// sanitize escapes control bytes (and invalid UTF-8) in text that came from
// users or agents, so that printing it cannot move the cursor, retitle the
// terminal or hide text. Newlines and tabs are escaped too: this is for
// one-line fields such as titles.
func sanitize(s string) string {
	return escapeControls(s, false)
}

// escapeControls escapes C0 and C1 control characters, DEL and invalid
// UTF-8 as \xNN (or \u for C1); keepLines keeps \n and \t as they are.
func escapeControls(s string, keepLines bool) string {
	clean := true
	for _, c := range s {
		if c == utf8.RuneError || c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			if !(keepLines && (c == '\n' || c == '\t')) {
				clean = false
				break
			}
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case keepLines && (c == '\n' || c == '\t'):
			b.WriteRune(c)
		case c == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		case c >= 0x80 && c < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func (r *run) printJSON(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := r.env.Stdout.Write(escapeC1(buf.Bytes()))
	return err
}

// escapeC1 rewrites the C1 control characters (U+0080 to U+009F) of encoded
// JSON as \u escapes. encoding/json leaves them raw, and some terminals act
// on them (U+009B starts an escape sequence) when JSON output is shown
// there. In JSON their UTF-8 bytes (C2 80 to C2 9F) can only be inside a
// string, where the escape means the same character.
func escapeC1(data []byte) []byte {
	if !bytes.Contains(data, []byte{0xc2}) {
		return data
	}
	out := make([]byte, 0, len(data)+16)
	for i := 0; i < len(data); i++ {
		if data[i] == 0xc2 && i+1 < len(data) && data[i+1] >= 0x80 && data[i+1] < 0xa0 {
			out = fmt.Appendf(out, `\u%04x`, data[i+1])
			i++
			continue
		}
		out = append(out, data[i])
	}
	return out
}

// describe is the one-line human description of a session.
func describe(s sessions.Session) string {
	line := fmt.Sprintf("%s [%s]", s.ID, s.Priority)
	if s.Title != "" {
		line += " " + sanitize(s.Title)
	}
	return line
}

// printSession prints a session after a transition: the JSON object, or a
// line saying what happened and where the file is now.
func (r *run) printSession(verb string, s sessions.Session) error {
	if r.json {
		return r.printJSON(s)
	}
	r.printf("%s %s\n", verb, describe(s))
	r.printf("  file: %s\n", s.Path)
	if s.Problem != "" {
		r.printf("  warning: broken frontmatter: %s (run `pickup doctor`)\n", sanitize(s.Problem))
	}
	return nil
}

// withFields returns the JSON object of s with extra fields added.
func withFields(s sessions.Session, extra map[string]any) map[string]any {
	data, _ := json.Marshal(s)
	obj := map[string]any{}
	_ = json.Unmarshal(data, &obj)
	for k, v := range extra {
		obj[k] = v
	}
	return obj
}
