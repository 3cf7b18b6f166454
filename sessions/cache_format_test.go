package sessions

import (
	"reflect"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "plain", in: "plain title", want: "plain title"},
		{name: "unicode", in: "é 世界 🙂", want: "é 世界 🙂"},
		{name: "tab", in: "a\tb", want: `a\tb`},
		{name: "newline", in: "a\nb", want: `a\nb`},
		{name: "unit separator", in: "a\x1fb", want: `a\ub`},
		{name: "backslash", in: `a\b`, want: `a\\b`},
		{name: "escaped-looking text", in: `\t\n\u\\`, want: `\\t\\n\\u\\\\`},
		{name: "trailing backslash", in: `a\`, want: `a\\`},
		{name: "backslash before newline", in: "\\\n", want: `\\\n`},
		{name: "carriage return kept", in: "a\rb", want: "a\rb"},
		{name: "empty", in: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := escape(tt.in)
			if got != tt.want {
				t.Errorf("escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if strings.ContainsAny(got, "\t\n\x1f") {
				t.Errorf("escape(%q) = %q still holds a separator", tt.in, got)
			}
			if back := unescape(got); back != tt.in {
				t.Errorf("unescape(escape(%q)) = %q", tt.in, back)
			}
		})
	}
}

func TestJoinSplitList(t *testing.T) {
	tests := []struct {
		name string
		in   []string
	}{
		{name: "nil", in: nil},
		{name: "one", in: []string{"a"}},
		{name: "several", in: []string{"a", "b c", "d"}},
		{name: "separators inside", in: []string{"a\x1fb", "c\td", "e\nf", `g\`, `\u`}},
		{name: "empty element between", in: []string{"a", "", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			joined := joinList(tt.in)
			if strings.ContainsAny(joined, "\t\n") {
				t.Errorf("joinList(%q) = %q holds a field or line separator", tt.in, joined)
			}
			if got := splitList(joined); !reflect.DeepEqual(got, tt.in) {
				t.Errorf("splitList(joinList(%q)) = %q", tt.in, got)
			}
		})
	}
}
