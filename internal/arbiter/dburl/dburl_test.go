package dburl

import "testing"

func TestKinds(t *testing.T) {
	for _, c := range []struct {
		in       string
		db, pw   bool
		redacted string
	}{
		{"origin", false, false, "origin"},
		{"git@example.com:team/repo.git", false, false, "git@example.com:team/repo.git"},
		{"postgres://pickup@db/board", true, false, "postgres://pickup@db/board"},
		{"postgresql://pickup:secret@db/board", true, true, "postgresql://pickup@db/board"},
		{"postgres://db/board?sslmode=disable&password=secret", true, true, "postgres://db/board?sslmode=disable"},
		{"postgres://u@h:5432/db?sslmode=disable", true, false, "postgres://u@h:5432/db?sslmode=disable"},
		{"postgresql://h/db?password=secret&sslmode=require", true, true, "postgresql://h/db?sslmode=require"},
		{"postgres:///db?host=/run/postgresql", true, false, "postgres:///db?host=/run/postgresql"},
	} {
		if got := IsURL(c.in); got != c.db {
			t.Errorf("IsURL(%q) = %v, want %v", c.in, got, c.db)
		}
		if !c.db {
			continue
		}
		if got := HasPassword(c.in); got != c.pw {
			t.Errorf("HasPassword(%q) = %v, want %v", c.in, got, c.pw)
		}
		if got, had := Redact(c.in); got != c.redacted || had != c.pw {
			t.Errorf("Redact(%q) = %q, %v; want %q, %v", c.in, got, had, c.redacted, c.pw)
		}
	}
}
