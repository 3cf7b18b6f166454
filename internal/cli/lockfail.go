package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
)

// lockFail gives a lock error the CLI's wording, keeping it matchable with
// errors.Is for the exit code (3 held or not the holder, 4 nobody holds it,
// 5 timeout) and the hint. self is the process that asked, if known.
func lockFail(err error, key, owner string, self proc.Process) error {
	k := lockName(key)
	var held *claim.LockHeldError
	var le *claim.LockError
	switch {
	case errors.As(err, &held):
		h := held.Holder
		if h.Owner == owner && self.PID != 0 && h.Process.PID == self.PID && h.Process.Host == self.Host {
			return &lockError{fmt.Sprintf("lock %s is already held by you: %s", k, h.Holder()), err}
		}
		return &lockError{fmt.Sprintf("lock %s is held by %s; pick other work and try later", k, h.Holder()), err}
	case errors.Is(err, claim.ErrLockTimeout) && errors.As(err, &le):
		msg := fmt.Sprintf("timed out waiting for lock %s", k)
		if le.Holder != nil {
			msg += ", held by " + le.Holder.Holder()
		}
		return &lockError{msg, err}
	case errors.Is(err, claim.ErrNotHolder) && errors.As(err, &le):
		msg := fmt.Sprintf("%s lock %s: you (%s) do not hold it", le.Op, k, sanitize(owner))
		if le.Holder != nil {
			msg = fmt.Sprintf("%s lock %s: it is held by %s, not by you (%s)", le.Op, k, le.Holder.Holder(), sanitize(owner))
		}
		return &lockError{msg, err}
	case errors.Is(err, claim.ErrLockNotHeld) && errors.As(err, &le):
		return exitError{code: ExitNotFound, err: &lockError{
			fmt.Sprintf("%s lock %s: nobody holds it (released already, or taken over and released after its holder exited)", le.Op, k), err}}
	case errors.Is(err, claim.ErrInvalidLockKey):
		return usageError("%v", err)
	}
	return err
}

// lockKeyOf is the key of a lock error as a shell word, for hints.
func lockKeyOf(err error) string {
	var held *claim.LockHeldError
	var le *claim.LockError
	key := "KEY"
	switch {
	case errors.As(err, &held):
		key = held.Key
	case errors.As(err, &le):
		key = le.Key
	}
	return lockName(key)
}

// lockName is key as printed: control bytes escaped, quoted for a shell
// unless plain.
func lockName(key string) string { return shellWord(sanitize(key)) }

// shellWord quotes s for a POSIX shell unless it is plain.
func shellWord(s string) string {
	plain := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.,:/@%+=", c)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// lockError is a lock error in the CLI's words.
type lockError struct {
	msg string
	err error
}

func (e *lockError) Error() string { return e.msg }
func (e *lockError) Unwrap() error { return e.err }
