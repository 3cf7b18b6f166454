package sessions_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/sessions"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool // valid
	}{
		{name: "one letter", in: "a", want: true},
		{name: "one digit", in: "7", want: true},
		{name: "all classes", in: "A.b_c-1", want: true},
		{name: "id", in: "2026-11-22_09-15-03", want: true},
		{name: "id with suffix", in: "2026-11-22_09-15-03-2", want: true},
		{name: "trailing dot", in: "a.", want: true},
		{name: "128 characters", in: strings.Repeat("a", 128), want: true},
		{name: "empty", in: "", want: false},
		{name: "dotfile", in: ".x", want: false},
		{name: "dot", in: ".", want: false},
		{name: "dot dot", in: "..", want: false},
		{name: "leading dash", in: "-x", want: false},
		{name: "leading underscore", in: "_x", want: false},
		{name: "slash", in: "a/b", want: false},
		{name: "backslash", in: `a\b`, want: false},
		{name: "NUL", in: "a\x00b", want: false},
		{name: "space", in: "a b", want: false},
		{name: "newline", in: "a\n", want: false},
		{name: "colon", in: "a:b", want: false},
		{name: "at", in: "user@host", want: false},
		{name: "129 characters", in: strings.Repeat("a", 129), want: false},
		{name: "non-ASCII", in: "é", want: false},
		{name: "non-ASCII later", in: "caf\u00e9", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range []struct {
				kind     string
				validate func(string) error
			}{{"ValidateID", sessions.ValidateID}, {"ValidateOwner", sessions.ValidateOwner}} {
				err := v.validate(tt.in)
				if got := err == nil; got != tt.want {
					t.Errorf("%s(%q) = %v, want valid %v", v.kind, tt.in, err, tt.want)
				}
				if err != nil && !errors.Is(err, sessions.ErrInvalidID) {
					t.Errorf("%s(%q) = %v, want an error matching ErrInvalidID", v.kind, tt.in, err)
				}
			}
		})
	}
}

func TestSanitizeOwner(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "valid stays", in: "alice", want: "alice"},
		{name: "valid with punctuation stays", in: "A.b_c-1", want: "A.b_c-1"},
		{name: "user at host", in: "alice@box", want: "alice-box"},
		{name: "uuid", in: "0f8fad5b-d9cb-469f-a165-70867728950e", want: "0f8fad5b-d9cb-469f-a165-70867728950e"},
		{name: "leading dot", in: ".alice", want: "alice"},
		{name: "leading dashes", in: "--alice", want: "alice"},
		{name: "leading underscore", in: "_www@box", want: "www-box"},
		{name: "leading junk then dot", in: "@.x", want: "x"},
		{name: "leading junk then underscore", in: "__svc@box", want: "svc-box"},
		{name: "slash", in: "a/b", want: "a-b"},
		{name: "spaces", in: "John Smith", want: "John-Smith"},
		{name: "non-ASCII", in: "josé", want: "jos--"},
		{name: "empty", in: "", want: "anonymous"},
		{name: "only junk", in: "@@@", want: "anonymous"},
		{name: "only non-ASCII", in: "é", want: "anonymous"},
		{name: "too long", in: strings.Repeat("a", 200), want: strings.Repeat("a", 128)},
		{name: "too long after trimming", in: "-" + strings.Repeat("b", 130), want: strings.Repeat("b", 128)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sessions.SanitizeOwner(tt.in)
			if got != tt.want {
				t.Errorf("SanitizeOwner(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if err := sessions.ValidateOwner(got); err != nil {
				t.Errorf("SanitizeOwner(%q) = %q, which is not a valid owner: %v", tt.in, got, err)
			}
		})
	}
}

// TestSanitizeOwnerAlwaysValid checks every two-byte prefix: whatever the
// input, the result is a valid owner name.
func TestSanitizeOwnerAlwaysValid(t *testing.T) {
	var bad []string
	for a := range 256 {
		for _, b := range []byte{'.', '_', '-', '@', 'x', 0, 0xff} {
			in := string([]byte{byte(a), b}) + "name"
			if got := sessions.SanitizeOwner(in); sessions.ValidateOwner(got) != nil {
				bad = append(bad, fmt.Sprintf("%q -> %q", in, got))
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("SanitizeOwner returned %d invalid owner names, e.g. %s", len(bad), strings.Join(bad[:min(len(bad), 5)], ", "))
	}
}
