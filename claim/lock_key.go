package claim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

func newToken() string { return fmt.Sprintf("%016x", rand.Uint64()) }

func validateLockKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidLockKey)
	}
	if len(key) > MaxLockKeyLen {
		return fmt.Errorf("%w: key is %d bytes long, at most %d are allowed", ErrInvalidLockKey, len(key), MaxLockKeyLen)
	}
	return nil
}

// lockFileName maps a key to its record's file name. Bytes other than
// [a-z0-9_-] are escaped as %XX (upper-case letters too, so that keys
// differing in case stay apart on case-insensitive filesystems), so the
// escaped key never holds '/', '.', NUL, or starts with '.'; it becomes
// "<escaped>.lock". An escaped key longer than maxEscapedLen becomes
// "<sha256 hex>.hash.lock" instead; as escaped keys hold no '.', the two
// forms never collide. The full key is always inside the record.
func lockFileName(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
		if b.Len() > maxEscapedLen {
			sum := sha256.Sum256([]byte(key))
			return hex.EncodeToString(sum[:]) + hashedSuffix
		}
	}
	return b.String() + lockSuffix
}

// keyFromFileName inverts lockFileName for names that are not hashed.
func keyFromFileName(name string) (string, bool) {
	esc, ok := strings.CutSuffix(name, lockSuffix)
	if !ok || strings.HasSuffix(name, hashedSuffix) {
		return "", false
	}
	var b []byte
	for i := 0; i < len(esc); i++ {
		if esc[i] != '%' {
			b = append(b, esc[i])
			continue
		}
		if i+2 >= len(esc) {
			return "", false
		}
		v, err := strconv.ParseUint(esc[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b = append(b, byte(v))
		i += 2
	}
	key := string(b)
	if key == "" || lockFileName(key) != name {
		return "", false // not in canonical form
	}
	return key, true
}

// printable returns s, quoted if it holds bytes that a terminal would
// interpret.
func printable(s string) string {
	if !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}
