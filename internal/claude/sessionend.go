package claude

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/pickup-dev/pickup/claim"
)

// sessionEnd releases what the session still holds and ends its lease;
// with keep_on_session_end in the board's config.yaml it keeps the claims,
// under a lease without a process: no longer tied to this Claude Code
// process, they stay the session's until it resumes (claude --resume) or
// `pickup reap` finds them older than the stale period.
func (h *Hooks) sessionEnd(boardDir, owner, reason string) error {
	b, err := h.open(boardDir)
	if b == nil {
		return err
	}
	var errs []error
	cfg, err := b.Config()
	if err != nil {
		errs = append(errs, fmt.Errorf("%w; releasing, the default", err))
	}
	leases := h.leases(b)
	list, _ := b.ListOwner(owner)
	if cfg.KeepOnSessionEnd && len(list) > 0 {
		// The claims outlive this Claude Code process: untie the lease
		// from it, so that its exit does not make them reapable at once.
		p, _ := h.Invoker()
		if _, err := leases.Detach(owner, claim.Holder(p)); err != nil {
			errs = append(errs, err)
		}
		for _, s := range list {
			h.printf("kept %s (keep_on_session_end)\n", h.Describe(s))
		}
	} else {
		cl, err := claim.New(b, owner)
		if err != nil {
			return err
		}
		var commit func(string)
		if h.Batch != nil {
			commit = h.Batch(b)
		}
		released, err := cl.ReleaseAll(context.Background())
		if err != nil {
			// Another release of the same owner may have raced this one
			// (the plugin's hooks and a project install's both run, say):
			// what matters is that the owner holds nothing now.
			if left, lerr := b.ListOwner(owner); lerr != nil || len(left) > 0 {
				errs = append(errs, err)
			}
		}
		if commit != nil {
			commit(fmt.Sprintf("pickup: release %d session(s) at the end of %s session %s", len(released), h.agent().Title, owner))
		}
		for _, s := range released {
			h.printf("released %s\n", h.Describe(s))
		}
		if err := leases.Remove(owner); err != nil {
			errs = append(errs, err)
		}
	}
	_ = os.Remove(beatPath(b.Dir, owner))
	if reason != "clear" {
		// After /clear the process goes on as a new session, whose
		// SessionStart reads from this record which session it follows
		// (and takes over what it kept), then overwrites it.
		h.forgetPid(b.Dir, owner)
	}
	return errors.Join(errs...)
}

// forgetPid removes the record of the Claude Code process running owner,
// unless it already names a later session of that process (after /clear).
func (h *Hooks) forgetPid(boardDir, owner string) {
	p, err := h.Invoker()
	if err != nil {
		return
	}
	path := PidPath(boardDir, p.PID)
	if rec, ok := ReadRecord(path); ok && rec.Owner == owner {
		_ = os.Remove(path)
	}
	if rec, ok := ReadRecord(SessionPath(boardDir, owner)); ok && rec.Process.Same(p) {
		_ = os.Remove(SessionPath(boardDir, owner))
	}
}
