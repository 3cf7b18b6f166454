// Package idsuffix makes and checks a clone's id suffix: the few
// characters that a shared board's clone (a git remote's, a PostgreSQL
// board's) puts into every session id it creates (boardhook.SetIDSuffix),
// so that two clones never make the same id in the same second. Its limit:
// suffixes are random, so two clones differ almost surely (1 in about 33
// million for a pair), not certainly; sessions' exclusive create still
// refuses a clash on one board.
package idsuffix

import "fmt"

// Len is the length of a suffix New makes.
const Len = 5

// alphabet: lower-case letters and digits that cannot be misread
// (base32's, RFC 4648, lower-cased).
const alphabet = "abcdefghijklmnopqrstuvwxyz234567"

// New makes a clone's id suffix from random bytes (at least Len of them):
// Len characters of [a-z2-7], about 33 million possibilities, so that two
// clones of one board almost surely differ. It starts with a letter so that
// it never reads as a counter.
func New(random []byte) (string, error) {
	if len(random) < Len {
		return "", fmt.Errorf("id suffix: need %d random bytes, got %d", Len, len(random))
	}
	out := make([]byte, Len)
	for i := range out {
		out[i] = alphabet[int(random[i])%len(alphabet)]
	}
	out[0] = alphabet[int(random[0])%26]
	return string(out), nil
}

// Valid reports whether s can be a clone's id suffix: 1 to 16 characters
// from [a-z0-9].
func Valid(s string) bool {
	if s == "" || len(s) > 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
