package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pickup-dev/pickup/internal/textsafe"
)

func TestEscapeControls(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      string // sanitize, keepLines false
		wantLines string // keepLines true
	}{
		{name: "plain", in: "Fix the parser", want: "Fix the parser", wantLines: "Fix the parser"},
		{name: "empty", in: "", want: "", wantLines: ""},
		{name: "unicode unchanged", in: "é 世界 🙂 Ωmega", want: "é 世界 🙂 Ωmega", wantLines: "é 世界 🙂 Ωmega"},
		{name: "replacement character unchanged", in: "a\ufffdb", want: "a\ufffdb", wantLines: "a\ufffdb"},
		{name: "no-break space unchanged", in: "a\u00a0b", want: "a\u00a0b", wantLines: "a\u00a0b"},
		{name: "backslash unchanged", in: `C:\path`, want: `C:\path`, wantLines: `C:\path`},
		{name: "CSI color", in: "\x1b[31mred\x1b[0m", want: `\x1b[31mred\x1b[0m`, wantLines: `\x1b[31mred\x1b[0m`},
		{name: "OSC title", in: "\x1b]0;owned\x07text", want: `\x1b]0;owned\x07text`, wantLines: `\x1b]0;owned\x07text`},
		{name: "cursor up and erase line", in: "ok\x1b[1A\x1b[2K", want: `ok\x1b[1A\x1b[2K`, wantLines: `ok\x1b[1A\x1b[2K`},
		{name: "BEL", in: "ding\a", want: `ding\x07`, wantLines: `ding\x07`},
		{name: "NUL", in: "a\x00b", want: `a\x00b`, wantLines: `a\x00b`},
		{name: "backspace", in: "abc\b\b\bxyz", want: `abc\x08\x08\x08xyz`, wantLines: `abc\x08\x08\x08xyz`},
		{name: "carriage return", in: "safe\rEVIL", want: `safe\x0dEVIL`, wantLines: `safe\x0dEVIL`},
		{name: "DEL", in: "a\x7fb", want: `a\x7fb`, wantLines: `a\x7fb`},
		{name: "C1 CSI", in: "a\u009b31mb", want: `a\u009b31mb`, wantLines: `a\u009b31mb`},
		{name: "C1 first and last", in: "\u0080\u009f", want: `\u0080\u009f`, wantLines: `\u0080\u009f`},
		{name: "raw C1 byte (invalid UTF-8)", in: "a\x9bb", want: `a\x9bb`, wantLines: `a\x9bb`},
		{name: "invalid UTF-8", in: "a\xffb", want: `a\xffb`, wantLines: `a\xffb`},
		{name: "truncated sequence", in: "a\xe2\x80", want: `a\xe2\x80`, wantLines: `a\xe2\x80`},
		{name: "overlong encoding", in: "\xc0\xaf", want: `\xc0\xaf`, wantLines: `\xc0\xaf`},
		{name: "encoded surrogate", in: "\xed\xa0\x80", want: `\xed\xa0\x80`, wantLines: `\xed\xa0\x80`},
		{name: "newline and tab", in: "a\nb\tc", want: `a\x0ab\x09c`, wantLines: "a\nb\tc"},
		{name: "CRLF", in: "a\r\nb", want: `a\x0d\x0ab`, wantLines: "a\\x0d\nb"},
		{name: "mixed", in: "é\x1b[2Jé\n", want: `é\x1b[2Jé\x0a`, wantLines: "é\\x1b[2Jé\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sanitize(tt.in); got != tt.want {
				t.Errorf("sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := textsafe.Line(tt.in); got != tt.want {
				t.Errorf("textsafe.Line(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := textsafe.Text(tt.in); got != tt.wantLines {
				t.Errorf("textsafe.Text(%q) = %q, want %q", tt.in, got, tt.wantLines)
			}
		})
	}
}

// isTerminalSafe reports whether s can be printed without the terminal
// interpreting anything in it.
func isTerminalSafe(s string, keepLines bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if keepLines && (c == '\n' || c == '\t') {
			continue
		}
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			return false
		}
	}
	return true
}

// TestEscapeControlsEveryByte checks every byte and every C0/C1 rune, alone
// and between letters: the output is always safe to print.
func TestEscapeControlsEveryByte(t *testing.T) {
	var inputs []string
	for b := range 256 {
		inputs = append(inputs, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"y")
	}
	for r := rune(0); r < 0xa0; r++ {
		inputs = append(inputs, string(r), "é"+string(r)+"é")
	}
	for _, in := range inputs {
		for _, keep := range []bool{false, true} {
			got := textsafe.Line(in)
			if keep {
				got = textsafe.Text(in)
			}
			if !isTerminalSafe(got, keep) {
				t.Errorf("escapeControls(%q, %v) = %q: not safe to print", in, keep, got)
			}
			if isTerminalSafe(in, keep) && got != in {
				t.Errorf("escapeControls(%q, %v) = %q: a safe string changed", in, keep, got)
			}
			if !isTerminalSafe(in, keep) && !strings.Contains(got, `\`) {
				t.Errorf("escapeControls(%q, %v) = %q: nothing escaped", in, keep, got)
			}
		}
	}
}

func TestEscapeC1(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{name: "plain", in: "title", want: `"title"`},
		{name: "CSI", in: "a\u009b31mred", want: `"a\u009b31mred"`},
		{name: "every C1 bound", in: "\u0080\u009f\u00a0é", want: `"\u0080\u009f` + "\u00a0é\""},
		{name: "C0 is encoding/json's", in: "a\x1bb", want: `"a\u001bb"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			r := &run{env: &Env{Stdout: &out}}
			if err := r.printJSON(tt.in); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSuffix(out.String(), "\n"); got != tt.want {
				t.Errorf("printJSON(%q) = %s, want %s", tt.in, got, tt.want)
			}
			var back string
			if err := json.Unmarshal([]byte(out.String()), &back); err != nil || back != tt.in {
				t.Errorf("decoding %s = %q, %v; want %q", out.String(), back, err, tt.in)
			}
		})
	}
}
