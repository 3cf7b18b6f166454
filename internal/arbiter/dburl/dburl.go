// Package dburl tells a config.yaml shared: value that names a PostgreSQL
// database (a libpq URL) from one that names a git remote, and keeps its
// password out of what pickup prints. It is a leaf: sessions (which
// checks config.yaml), internal/arbiter/location (which opens the
// arbiter) and internal/arbiter/postgres all ask it, so that the kinds are told
// apart one way only.
package dburl

import (
	"net/url"
	"strings"
)

// IsURL reports whether s names a PostgreSQL database (a libpq URL).
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Redact returns u without a password (in the user info or a password=
// parameter), and whether it had one. A URL that does not parse is
// returned as it is, with HasPassword's answer.
func Redact(u string) (string, bool) {
	p, err := url.Parse(u)
	if err != nil {
		return u, HasPassword(u)
	}
	had := false
	if p.User != nil {
		if _, ok := p.User.Password(); ok {
			p.User = url.User(p.User.Username())
			had = true
		}
	}
	q := p.Query()
	if q.Has("password") {
		q.Del("password")
		p.RawQuery = q.Encode()
		had = true
	}
	return p.String(), had
}

// HasPassword reports whether a database URL holds a password (user:pw@
// or a password= parameter), reading the text only: it answers for a URL
// that net/url would not parse too.
func HasPassword(s string) bool {
	i := strings.Index(s, "://")
	if i < 0 {
		return false
	}
	rest := s[i+3:]
	if at := strings.LastIndex(strings.SplitN(rest, "/", 2)[0], "@"); at >= 0 && strings.Contains(rest[:at], ":") {
		return true
	}
	_, query, _ := strings.Cut(rest, "?")
	for _, kv := range strings.Split(query, "&") {
		if strings.HasPrefix(kv, "password=") {
			return true
		}
	}
	return false
}
