package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrInvalidID reports an id or owner name that is not a safe file name.
var ErrInvalidID = errors.New("invalid id")

// IDFormat is the time layout of generated ids, always in UTC.
const IDFormat = "2006-01-02_15-04-05"

const maxNameLen = 128

// validateName reports whether s can be used as a session id or an owner
// name: 1 to 128 characters from [A-Za-z0-9._-], starting with a letter or a
// digit. Such a name can never be empty, a dotfile, "..", or contain a path
// separator or NUL, so it cannot escape the board.
func validateName(kind, s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalidID, kind)
	}
	if len(s) > maxNameLen {
		return fmt.Errorf("%w: %s is %d characters long, at most %d are allowed", ErrInvalidID, kind, len(s), maxNameLen)
	}
	if !validName(s) {
		return fmt.Errorf("%w: %s %q: use 1 to %d characters from A-Z a-z 0-9 . _ - starting with a letter or digit", ErrInvalidID, kind, s, maxNameLen)
	}
	return nil
}

// validName is validateName's rule, without the message: for directory
// entries, which are checked by the thousand.
func validName[T string | []byte](s T) bool {
	if len(s) == 0 || len(s) > maxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if i > 0 {
			ok = ok || c == '.' || c == '_' || c == '-'
		}
		if !ok {
			return false
		}
	}
	return true
}

// ValidateID reports whether id is a valid session id.
func ValidateID(id string) error { return validateName("id", id) }

// ValidateOwner reports whether owner is a valid owner name.
func ValidateOwner(owner string) error { return validateName("owner", owner) }

// SanitizeOwner maps an arbitrary string (a user@host pair, a session UUID)
// to a valid owner name by replacing every disallowed byte with '-'.
func SanitizeOwner(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if i > 0 {
			ok = ok || c == '.' || c == '_' || c == '-'
		}
		if !ok {
			b[i] = '-'
		}
	}
	// Only the first byte was held to [A-Za-z0-9]: trimming may expose
	// a '.' or '_', which cannot start a name either.
	out := strings.TrimLeft(string(b), "-._")
	if len(out) > maxNameLen {
		out = out[:maxNameLen]
	}
	if out == "" {
		out = "anonymous"
	}
	return out
}

// idCandidate returns the n-th id candidate for time t: the bare timestamp
// first, then timestamp-2, timestamp-3, and so on.
func idCandidate(t time.Time, n int) string { return idCandidateWith(t, n, "") }

// idCandidateWith is idCandidate with a clone's suffix after the
// timestamp: 2026-11-22_09-15-04.k3f9q, then 2026-11-22_09-15-04.k3f9q-2.
// Two clones with different suffixes never make the same id; ids still
// sort by creation second ('.' and '-' come after the timestamp, which
// has a fixed width) and obey validateName.
func idCandidateWith(t time.Time, n int, suffix string) string {
	base := t.UTC().Format(IDFormat)
	if suffix != "" {
		base += "." + suffix
	}
	if n == 0 {
		return base
	}
	return fmt.Sprintf("%s-%d", base, n+1)
}

// isSessionName is IsSessionName for a directory entry's name.
func isSessionName(name []byte) bool {
	id, ok := bytes.CutSuffix(name, []byte(".md"))
	return ok && validName(id)
}
