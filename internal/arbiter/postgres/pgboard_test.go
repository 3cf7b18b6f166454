package postgres

import "testing"

func TestParsePlace(t *testing.T) {
	for _, tc := range []struct {
		in, state, owner string
		ok               bool
	}{
		{"", "", "", true},
		{"todo", "todo", "", true},
		{"doing/alice", "doing", "alice", true},
		{"done", "done", "", true},
		{"failed", "failed", "", true},
		{"conflicts/x.md", "", "", false},
		{"doing/../x", "", "", false},
	} {
		st, owner, ok := parsePlace(tc.in)
		if st != tc.state || owner != tc.owner || ok != tc.ok {
			t.Errorf("parsePlace(%q) = %q, %q, %v; want %q, %q, %v", tc.in, st, owner, ok, tc.state, tc.owner, tc.ok)
		}
	}
}
