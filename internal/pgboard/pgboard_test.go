package pgboard

import "testing"

func TestRedact(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		had      bool
	}{
		{"postgres://u@h:5432/db?sslmode=disable", "postgres://u@h:5432/db?sslmode=disable", false},
		{"postgres://u:secret@h/db", "postgres://u@h/db", true},
		{"postgresql://h/db?password=secret&sslmode=require", "postgresql://h/db?sslmode=require", true},
		{"postgres:///db?host=/run/postgresql", "postgres:///db?host=/run/postgresql", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, had := Redact(tc.in)
			if got != tc.want || had != tc.had {
				t.Errorf("Redact(%q) = %q, %v; want %q, %v", tc.in, got, had, tc.want, tc.had)
			}
		})
	}
}

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
