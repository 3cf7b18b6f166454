package textsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineAndText(t *testing.T) {
	for _, tc := range []struct {
		name, in, line, text string
	}{
		{"clean", "Fix the parser – ünïcode ✓", "Fix the parser – ünïcode ✓", "Fix the parser – ünïcode ✓"},
		{"esc", "a\x1b[2Jb", `a\x1b[2Jb`, `a\x1b[2Jb`},
		{"osc bel", "\x1b]0;X\a", `\x1b]0;X\x07`, `\x1b]0;X\x07`},
		{"lines", "a\nb\tc\rd", `a\x0ab\x09c\x0dd`, "a\nb\tc\\x0dd"},
		{"del", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"c1 csi", "a\u009bb", `a\u009bb`, `a\u009bb`},
		{"rlo", "abc\u202edef", `abc\u202edef`, `abc\u202edef`},
		{"every bidi", "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069",
			`\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`,
			`\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"invalid utf8", "a\xffb\xc3", `a\xffb\xc3`, `a\xffb\xc3`},
		{"replacement char is fine", "a\ufffdb", "a\ufffdb", "a\ufffdb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.in); got != tc.line {
				t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
			}
			if got := Text(tc.in); got != tc.text {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
			}
		})
	}
}

// hostile holds every kind of character the package promises to escape.
const hostile = "\x00\x07\x08\x1b[2J\x1b]0;X\x07\r\x7f\u0085\u009b\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\xff\xfe\xc3"

func assertSafe(t *testing.T, what string, out []byte, keepLines bool) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Errorf("%s: invalid UTF-8 in %q", what, out)
	}
	for _, r := range string(out) {
		if keepLines && (r == '\n' || r == '\t') {
			continue
		}
		if unsafeRune(r) {
			t.Errorf("%s: raw %U in %q", what, r, out)
		}
	}
}

func TestNothingUnsafeSurvives(t *testing.T) {
	for i := 0; i < 256; i++ {
		s := "x" + string([]byte{byte(i)}) + "y" + hostile
		assertSafe(t, "Line", []byte(Line(s)), false)
		assertSafe(t, "Text", []byte(Text(s)), true)
	}
	for r := rune(0); r < 0x3000; r++ {
		s := string(r)
		if unsafeRune(r) && Line(s) == s {
			t.Errorf("%U passes Line raw", r)
		}
	}
}

func TestWriterSplitsAndConcurrency(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	in := []byte("é" + hostile + "ok ✓\n")
	// One byte per write: every multi-byte sequence is split.
	for i := range in {
		if n, err := w.Write(in[i : i+1]); n != 1 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), strings.ReplaceAll(Text(string(in)), `\x7f`, `\u007f`); got != want {
		t.Errorf("byte by byte:\n got %q\nwant %q", got, want)
	}
	assertSafe(t, "Writer", out.Bytes(), true)
	// A trailing incomplete sequence comes out escaped at Flush.
	out.Reset()
	w.Write([]byte("a\xe2\x80"))
	w.Flush()
	if got := out.String(); got != `a\xe2\x80` {
		t.Errorf("flush of a cut sequence: %q", got)
	}
}

func TestJSON(t *testing.T) {
	v := map[string]string{"title": "a\u202eb\u009bc\x1bd\xffe\x7ff"}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	safe := JSON(data)
	assertSafe(t, "JSON", safe, false)
	var back map[string]string
	if err := json.Unmarshal(safe, &back); err != nil {
		t.Fatalf("not JSON any more: %v\n%s", err, safe)
	}
	if back["title"] != "a\u202eb\u009bc\x1bd\ufffde\x7ff" {
		t.Errorf("value changed: %q", back["title"])
	}
	if !strings.Contains(string(safe), `\u202e`) {
		t.Errorf("no \\u202e escape in %s", safe)
	}
	// The Writer keeps JSON valid too: it escapes only what JSON can hold
	// inside strings, the way JSON escapes it.
	var out bytes.Buffer
	w := NewWriter(&out)
	w.Write(append(data, '\n'))
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back["title"] != "a\u202eb\u009bc\x1bd\ufffde\x7ff" {
		t.Errorf("JSON through the Writer: %v %q\n%s", err, back["title"], out.Bytes())
	}
}
