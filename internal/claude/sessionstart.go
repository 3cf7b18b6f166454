package claude

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// sessionStart registers the owner's lease for the Claude Code process,
// records which session that process runs, exports the session id to the
// Bash tool, and prints what the session holds.
func (h *Hooks) sessionStart(boardDir, owner, source string) error {
	b, err := h.open(boardDir)
	if b == nil {
		return err
	}
	var errs []error
	// After /clear the same Claude Code process goes on as a new session:
	// the session it ran before is in its pid record, until overwritten
	// below.
	previous := ""
	if p, err := h.Invoker(); err == nil && source == "clear" {
		if rec, ok := ReadRecord(PidPath(b.Dir, p.PID)); ok && rec.Process.Same(p) && rec.Owner != owner {
			previous = rec.Owner
		}
	}
	// The hook runs outside Claude Code's Bash sandbox, so it sees the
	// Claude Code process as the machine numbers it: the lease follows
	// that process, and commands in the sandbox use this record instead
	// of their own renumbered processes (SessionProcess).
	if p, err := h.Invoker(); err != nil {
		errs = append(errs, err)
	} else {
		// Renew: SessionStart runs again at every /clear and /compact,
		// when the lease is usually as it should be.
		if _, err := h.leases(b).Renew(owner, BeatEvery, claim.Holder(p)); err != nil {
			errs = append(errs, err)
		} else {
			h.beat(b, owner)
		}
		rec := Record{Owner: owner, Process: p}
		if err := WritePid(b.Dir, rec); err != nil {
			errs = append(errs, err)
		}
		if err := writeSession(b.Dir, rec); err != nil {
			errs = append(errs, err)
		}
	}
	if err := touch(beatPath(b.Dir, owner), h.Now()); err != nil {
		errs = append(errs, err)
	}
	if previous != "" {
		if err := h.handOver(b, previous, owner); err != nil {
			errs = append(errs, err)
		}
	}
	h.prune(b)
	if err := h.exportSessionID(owner); err != nil {
		errs = append(errs, err)
	}
	if err := h.printClaims(b, owner); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// prune forgets the Claude Code processes that ended without a SessionEnd
// (a crash, a killed terminal): their pid records, throttle files, and
// their leases if they hold nothing (a lease with claims stays: it is how
// next finds those claims and returns them).
func (h *Hooks) prune(b *sessions.Board) {
	dir := filepath.Dir(PidPath(b.Dir, 0))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	leases := h.leases(b)
	self := h.Proc.Self()
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		rec, ok := ReadRecord(path)
		if !ok || sessions.ValidateOwner(rec.Owner) != nil {
			continue
		}
		if h.Proc.Liveness(rec.Process, self) != proc.Dead {
			continue // running, or nothing can be proven from here
		}
		_ = os.Remove(path)
		if s, ok := ReadRecord(SessionPath(b.Dir, rec.Owner)); ok && s.Process.Same(rec.Process) {
			_ = os.Remove(SessionPath(b.Dir, rec.Owner))
		}
		_ = os.Remove(beatPath(b.Dir, rec.Owner))
		if held, err := b.ListOwner(rec.Owner); len(held) > 0 || (err != nil && !errors.Is(err, fs.ErrNotExist)) {
			continue
		}
		if l, err := leases.Get(rec.Owner); err == nil && len(l.Holders) == 1 && l.Holders[0].Same(claim.Holder(rec.Process)) {
			_ = leases.Remove(rec.Owner)
		}
	}
}

// exportSessionID appends `export CLAUDE_SESSION_ID=<id>` to the file that
// Claude Code gives SessionStart hooks in $CLAUDE_ENV_FILE and sources
// before each Bash command, so that pickup run by the agent without --owner
// finds the hooks' owner. The id is a valid owner name: no quoting needed.
func (h *Hooks) exportSessionID(owner string) error {
	path := h.Getenv("CLAUDE_ENV_FILE")
	if path == "" {
		return nil
	}
	line := "export CLAUDE_SESSION_ID=" + owner + "\n"
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if bytes.HasSuffix(old, []byte(line)) || bytes.HasPrefix(old, []byte(line)) || bytes.Contains(old, []byte("\n"+line)) {
		return nil
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		line = "\n" + line
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// printClaims prints, for Claude's context, who the session is on the board
// and what it holds.
func (h *Hooks) printClaims(b *sessions.Board, owner string) error {
	if id, workOwner, ok := h.givenByWork(b); ok {
		return h.printGiven(b, id, workOwner)
	}
	list, err := b.ListOwner(owner)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	waiting := 0
	if entries, err := os.ReadDir(b.StateDir(sessions.Todo, "")); err == nil {
		for _, e := range entries {
			if _, ok := sessions.IsSessionName(e.Name()); ok && e.Type().IsRegular() {
				waiting++
			}
		}
	}
	// No "pass --owner ID" here: this text stays in the conversation, and
	// a fork of it would act as this session. pickup finds the owner from
	// $CLAUDE_CODE_SESSION_ID, which each session's commands carry.
	h.printf("pickup: this %s session is owner %s on the board %s; pickup commands you run act as it (do not pass --owner).\n", h.agent().Title, owner, b.Dir)
	if len(list) == 0 {
		h.printf("It holds no sessions; %d wait in todo/. /pickup claims one.\n", waiting)
		return nil
	}
	h.printf("It holds %d session(s), claimed earlier and still yours:\n", len(list))
	for _, s := range list {
		h.printf("- %s\n  file: %s\n", h.Describe(s), s.Path)
	}
	h.printf("Finish one with `pickup done ID`, hand it over with /handoff, or give it back with `pickup release ID`. Never move, edit or delete board files by hand.\n")
	return nil
}

// givenByWork returns the session that `pickup work` gave the command
// that started this Claude Code session, if it did: work sets
// $PICKUP_SESSION_ID, $PICKUP_OWNER and $PICKUP_DIR for its command, and
// Claude Code passes its environment on to its hooks and to the agent's
// commands, which then act as work's owner.
func (h *Hooks) givenByWork(b *sessions.Board) (id, owner string, ok bool) {
	id, owner, dir := h.Getenv("PICKUP_SESSION_ID"), h.Getenv("PICKUP_OWNER"), h.Getenv("PICKUP_DIR")
	if id == "" || owner == "" || dir == "" || sessions.ValidateID(id) != nil || sessions.ValidateOwner(owner) != nil {
		return "", "", false
	}
	if d, err := filepath.Abs(dir); err != nil || filepath.Clean(d) != filepath.Clean(b.Dir) {
		return "", "", false
	}
	return id, owner, true
}

// printGiven tells an agent that pickup work started which session it
// works: that one, and no other.
func (h *Hooks) printGiven(b *sessions.Board, id, owner string) error {
	path := b.Path(sessions.Doing, owner, id)
	s, _, err := b.Read(sessions.Place{State: sessions.Doing, Owner: owner, Path: path})
	if err != nil {
		h.printf("pickup: pickup work started this %s session for session %s of the board %s, which is no longer held (%v): there is nothing to work on; stop.\n", h.agent().Title, id, b.Dir, err)
		return nil
	}
	h.printf("pickup: pickup work started this %s session to work on one session of the board %s, and it holds it for you:\n", h.agent().Title, b.Dir)
	h.printf("- %s\n  file: %s\n", h.Describe(s), s.Path)
	h.printf("pickup commands you run act as work's owner %s (do not pass --owner); `pickup next` and /pickup answer with this same session and claim no other. "+
		"Read it (`pickup show %s`), do the work, then `pickup done %s` (or just end: work marks it done when you exit successfully). "+
		"To give it back unfinished: `pickup release %s`. Never move, edit or delete board files by hand.\n", owner, id, id, id)
	return nil
}

// handOver gives the session that goes on after /clear what the cleared
// one kept (keep_on_session_end: SessionEnd kept the claims, under a
// lease without a process): the same window, the same agent, now under a
// new id. Each session moves in one rename, never through todo/.
func (h *Hooks) handOver(b *sessions.Board, from, to string) error {
	cfg, err := b.Config()
	if err != nil || !cfg.KeepOnSessionEnd {
		return nil // SessionEnd released them
	}
	list, err := b.ListOwner(from)
	if err != nil || len(list) == 0 {
		return nil
	}
	cl, err := claim.New(b, from)
	if err != nil {
		return err
	}
	var commit func(string)
	if h.Batch != nil {
		commit = h.Batch(b)
	}
	var errs []error
	moved := 0
	for _, s := range list {
		if _, err := cl.HandOver(context.Background(), s.ID, to); err != nil {
			errs = append(errs, err)
			continue
		}
		moved++
	}
	if commit != nil && moved > 0 {
		commit(fmt.Sprintf("pickup: hand over %d session(s) from %s session %s to %s after /clear", moved, h.agent().Title, from, to))
	}
	if left, err := b.ListOwner(from); err == nil && len(left) == 0 {
		_ = h.leases(b).Remove(from)
	}
	return errors.Join(errs...)
}
