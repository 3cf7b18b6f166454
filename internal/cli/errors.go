package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/pickup-dev/pickup/claim"
	arbiterapi "github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// Exit codes, the same for every command.
const (
	ExitOK           = 0 // success
	ExitError        = 1 // unexpected error (and doctor: problems found)
	ExitUsage        = 2 // usage or invalid input, or no board here
	ExitNotAvailable = 3 // lost a race, owned by another, nothing to claim
	ExitNotFound     = 4 // no such session
	ExitLockTimeout  = 5 // waited for a lock and did not get it
	ExitClaimLost    = 6 // this owner's claim was reaped and taken away
	ExitConflict     = 7 // the destination already holds that id
	// ExitInterrupted: stopped by SIGINT or SIGTERM before finishing
	// (128 + SIGINT, the shell's convention).
	ExitInterrupted = 130
)

// errUsage marks command-line mistakes (arbiter.ErrUsage: an arbiter's step
// refuses with the same value).
var errUsage = arbiterapi.ErrUsage

func usageError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// exitCodes maps errors to exit codes: the first entry that matches wins.
var exitCodes = []struct {
	err  error
	code int
}{
	{context.Canceled, ExitInterrupted},
	{arbiterapi.ErrDiskFull, ExitError}, // the machine's failure, not the remote's
	{arbiterapi.ErrRemote, ExitRemote},
	{arbiterapi.ErrDatabase, ExitRemote},
	{gitx.ErrNetTimeout, ExitRemote}, // a remote that stopped answering (sync)
	{errUsage, ExitUsage},
	{sessions.ErrInvalidID, ExitUsage},
	{sessions.ErrNoBoard, ExitUsage},
	{sessions.ErrBadFrontmatter, ExitUsage},
	{sessions.ErrUnsafePath, ExitUsage},
	{gitx.ErrStopped, ExitUsage},                 // a stopped rebase: nothing moved
	{gitx.ErrSyncRunning, ExitLockTimeout},       // waited for a sync in vain
	{sessions.ErrRepairRunning, ExitLockTimeout}, // waited for doctor --fix in vain
	{claim.ErrCrossDevice, ExitError},
	{claim.ErrClaimLost, ExitClaimLost},
	{claim.ErrSessionNotAvailable, ExitNotAvailable},
	{claim.ErrNothingAvailable, ExitNotAvailable},
	{claim.ErrSessionNotFound, ExitNotFound},
	{claim.ErrConflict, ExitConflict},
	{claim.ErrLockTimeout, ExitLockTimeout},
	{claim.ErrLockHeld, ExitNotAvailable},
	{claim.ErrNotHolder, ExitNotAvailable},
}

// ExitCode returns the exit code for err.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	for _, e := range exitCodes {
		if errors.Is(err, e.err) {
			return e.code
		}
	}
	return ExitError
}

type exitCoder interface{ ExitCode() int }

// report prints err as "pickup: error: …" with a hint on stderr (and, with
// --json, as a JSON object on stdout), and returns the exit code.
func (r *run) report(err error) int {
	code := ExitCode(err)
	var ee exitError
	if errors.As(err, &ee) && ee.quiet {
		return code
	}
	msg := err.Error()
	for strings.HasPrefix(msg, "usage: ") {
		msg = strings.TrimPrefix(msg, "usage: ")
	}
	hint := r.hint(err)
	if r.json {
		obj := map[string]any{"error": msg, "exit_code": code}
		if hint != "" {
			obj["hint"] = hint
		}
		_ = json.NewEncoder(r.env.Stdout).Encode(obj)
	}
	fmt.Fprintf(r.env.Stderr, "pickup: error: %s\n", sanitize(msg))
	if hint != "" {
		fmt.Fprintf(r.env.Stderr, "pickup: hint: %s\n", hint)
	}
	return code
}

// hint tells the reader, often an AI agent, what to do next. It never
// suggests moving, editing or deleting board files by hand.
func (r *run) hint(err error) string {
	var ce *claim.Error
	errors.As(err, &ce)
	id := ""
	if ce != nil {
		id = ce.ID
	} else if rf := (*arbiterapi.Refusal)(nil); errors.As(err, &rf) {
		id = rf.ID // a new session that the arbiter refused (sessions.Create)
	}
	// Errors that know what to do say it themselves (git: a stale
	// index.lock, a failed sync, an uncommitted transition).
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		if s := h.Hint(); s != "" {
			return s
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "interrupted before anything was claimed; nothing changed"
	case errors.Is(err, errUsage):
		return "run `pickup help` or `pickup COMMAND --help` for usage"
	case errors.Is(err, sessions.ErrRepairRunning):
		return "a `pickup doctor --fix` held the board's move guard (.pickup/moves.lock) all that time: nothing moved; run the command again, and if it happens again, look for a stopped doctor (ps)"
	case errors.Is(err, sessions.ErrNoBoard):
		return "run `pickup init` to create a board here, or point to one with --dir or $PICKUP_DIR"
	case errors.Is(err, sessions.ErrInvalidID):
		return "ids and owners use 1 to 128 characters from A-Z a-z 0-9 . _ - and start with a letter or digit, e.g. 2026-11-22_09-15-03; run `pickup list` to see the ids"
	case errors.Is(err, claim.ErrLostToEarlierClaim):
		return fmt.Sprintf("%s was claimed by another owner before you (a sync or merge had hidden that claim), and `pickup doctor --fix` gave it to them; your copy is in conflicts/; do not finish it; run `pickup next` to take other work", id)
	case errors.Is(err, claim.ErrClaimLost):
		return fmt.Sprintf("your claim on %s was reaped (your process was gone or silent too long) and the session went back to the queue or to another owner; do not finish it; run `pickup next` to take other work", id)
	case errors.Is(err, claim.ErrNothingAvailable):
		if h := blockedHint(err); h != "" {
			return h
		}
		return "nothing to claim right now: create a session with `pickup new`, or look at the board with `pickup list`"
	case errors.Is(err, claim.ErrSessionNotAvailable) && ce != nil:
		switch {
		case ce.Holder != "" && (ce.Op == "claim" || ce.Op == "next"):
			return fmt.Sprintf("session %s is being worked on by %s; run `pickup next` to take another", id, ce.Holder)
		case ce.Holder != "":
			return fmt.Sprintf("session %s is claimed by %s, not by you (%s); leave it to them and run `pickup next` to take other work", id, ce.Holder, r.ownerOrUnknown())
		case ce.State == sessions.Done:
			return fmt.Sprintf("session %s is already done; `pickup reopen %s` puts it back in todo if it needs more work", id, id)
		case ce.State == sessions.Todo:
			return fmt.Sprintf("session %s is waiting in todo, nobody holds it; `pickup claim %s` takes it", id, id)
		}
	case errors.Is(err, claim.ErrSessionNotFound):
		return fmt.Sprintf("no session %s on the board; run `pickup list` to see the sessions", id)
	case errors.Is(err, claim.ErrConflict):
		return fmt.Sprintf("another copy of %s is already at the destination and nothing was overwritten; run `pickup doctor` to see both copies", id)
	case errors.Is(err, claim.ErrLockTimeout):
		return "the lock stayed held for the whole wait: pick other work and try again later (`pickup lock list` shows who holds which lock)"
	case errors.Is(err, claim.ErrLockHeld):
		key := lockKeyOf(err)
		return fmt.Sprintf("the lock on %s is taken: pick other work and try again later, or wait for it with `pickup lock acquire %s --wait 10m`; if you took it yourself, run `pickup lock release %s` when you are done", key, key, key)
	case errors.Is(err, claim.ErrNotHolder):
		return "only the holder of a lock releases or renews it: leave it to them and pick other work (`pickup lock list` shows who holds which lock)"
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "the disk is full (or your quota is used up): free space on it and run the command again"
	case errors.Is(err, claim.ErrCrossDevice):
		return "todo/, doing/ and done/ must be on one filesystem for atomic moves; keep the whole board on one filesystem (no separate mounts inside it)"
	}
	return ""
}

func (r *run) ownerOrUnknown() string {
	if r.owner != "" {
		return r.owner
	}
	return "unknown owner"
}
