package claim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// DefaultMaxAttempts is how many times a session may be reaped (or, under
// pickup work, fail) before it is set aside in failed/, unless the board's
// config.yaml says otherwise (max_attempts).
const DefaultMaxAttempts = 3

// Reaped is one session returned to todo/ (or set aside in failed/)
// because its owner was dead or stale, or, in a dry run, one that would be.
type Reaped struct {
	ID     string     `json:"id"`
	Owner  string     `json:"owner"`
	State  OwnerState `json:"owner_state"`
	Reason string     `json:"reason"`
	At     time.Time  `json:"at"`
	// Attempt is the session's attempt count after this reap.
	Attempt int `json:"attempt,omitempty"`
	// SetAside: the session reached the board's max_attempts and went to
	// failed/ instead of todo/.
	SetAside bool `json:"set_aside,omitempty"`
	// Err is why this session could not be returned (a conflict in todo/);
	// empty when it was.
	Err string `json:"error,omitempty"`
}

// ReapOptions choose which owners Reap takes sessions from.
type ReapOptions struct {
	// Stale is how long an owner whose liveness cannot be checked may go
	// without a heartbeat (DefaultStale if zero).
	Stale time.Duration
	// OnlyDead skips stale owners: only owners whose processes are known
	// to be gone are reaped (what next does on its own).
	OnlyDead bool
	// DryRun reports what would be reaped and changes nothing.
	DryRun bool
	// Except is never reaped (the caller itself).
	Except string
	// MaxAttempts: a reaped session whose attempt count reaches it is set
	// aside in failed/. 0 means the board's max_attempts, else
	// DefaultMaxAttempts; a negative value never sets one aside.
	MaxAttempts int
	// Only, if set, reaps that owner alone (a person giving back one dead
	// owner's claims from the web board).
	Only string
	// By, if set, is who asked for the reap: it is added to each reap's
	// reason, and so to the history and the session's last_error.
	By string
}

// Reap returns every session of dead or stale owners to todo/, each with
// one no-replace rename. Each reap counts as an attempt of the session
// (attempts and last_error in its frontmatter): a session that kills every
// agent that takes it is set aside in failed/ after MaxAttempts.
//
// Each owner is judged twice: once to find candidates cheaply, and again
// under the owner's guard, which registering a holder and heartbeating also
// take, so that a process of the owner that claims meanwhile is never
// reaped. Each reaped session is recorded under .pickup/reaped/<owner>/<id>
// before it moves, so that the owner's later done, release or heartbeat of
// it fails with ErrClaimLost (fencing), whoever moves it after. A dead
// owner's lease is removed.
func (l *Leases) Reap(opts ReapOptions) ([]Reaped, error) {
	owners, err := l.Board.Owners()
	if err != nil {
		return nil, err
	}
	// This process is looked up (five reads of /proc) only when some owner
	// is to be judged: next, on a board where it is the only owner, does
	// not need it.
	var local proc.Process
	looked := false
	var out []Reaped
	for _, owner := range owners {
		if owner == opts.Except || opts.Only != "" && owner != opts.Only {
			continue
		}
		if opts.OnlyDead {
			// Cheap path for next: only an owner with a lease can be
			// known dead (here, or on another board of this machine:
			// lease_heard.go).
			if _, err := os.Stat(l.path(owner)); err != nil && len(l.heardHolders(owner)) == 0 {
				continue
			}
		}
		if !looked {
			local, looked = l.sys.Self(), true
		}
		if state, _, _ := l.judge(owner, opts.Stale, local); !reapable(state, opts) {
			continue
		}
		l.at("judged", owner, "")
		got, err := l.reapOwner(owner, opts, local)
		out = append(out, got...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func reapable(state OwnerState, opts ReapOptions) bool {
	return state == OwnerDead || (state == OwnerStale && !opts.OnlyDead)
}

// reapOwner judges owner again under its guard and reaps it if it still
// stands dead or stale.
func (l *Leases) reapOwner(owner string, opts ReapOptions, local proc.Process) ([]Reaped, error) {
	unlock, err := l.guard(owner)
	if err != nil {
		return nil, err
	}
	defer unlock()
	state, _, reason := l.judge(owner, opts.Stale, local)
	if !reapable(state, opts) {
		return nil, nil // a claim or a heartbeat came first
	}
	return l.reapLocked(owner, state, reason, opts)
}

// reapLocked reaps every session of owner, with its guard held.
func (l *Leases) reapLocked(owner string, state OwnerState, reason string, opts ReapOptions) ([]Reaped, error) {
	list, err := l.Board.ListOwner(owner)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	max := opts.MaxAttempts
	if max == 0 && len(list) > 0 && !opts.DryRun {
		max = l.maxAttempts()
	}
	c := &Client{Board: l.Board, Owner: owner}
	if opts.By != "" {
		reason += "; given back by " + opts.By
	}
	var out []Reaped
	for _, s := range list {
		r := Reaped{ID: s.ID, Owner: owner, State: state, Reason: reason, At: l.now(), Attempt: s.Attempts + 1}
		r.SetAside = max > 0 && r.Attempt >= max
		if !opts.DryRun {
			// Fence, rewrite and move all out of a sync's way, or none
			// (see sessions.Board.EnterMove); the rename nests in this.
			leave, err := l.Board.EnterMove()
			if err != nil {
				return out, &Error{Op: "reap", ID: s.ID, Err: err}
			}
			// The fence first: whoever moves the session from now on,
			// the owner's done or release of it is told it lost.
			l.recordReaped(r)
			l.at("fenced", owner, s.ID)
			err = c.reapOne(s, r)
			leave()
			if errors.Is(err, ErrSessionNotFound) || errors.Is(err, ErrSessionNotAvailable) {
				continue // moved on by the owner's last pickup call
			}
			if err != nil {
				r.Err = err.Error()
			}
		}
		out = append(out, r)
	}
	if !opts.DryRun && state == OwnerDead {
		_ = l.remove(owner)
		_ = os.Remove(l.Board.StateDir(sessions.Doing, owner)) // only if empty
	}
	return out, nil
}

// maxAttempts is the board's max_attempts, else DefaultMaxAttempts.
func (l *Leases) maxAttempts() int {
	if cfg, err := l.Board.Config(); err == nil && cfg.MaxAttempts != 0 {
		return cfg.MaxAttempts
	}
	return DefaultMaxAttempts
}

// reapOne counts the reap as an attempt in the session's frontmatter and
// moves it to todo/, or to failed/ when r.SetAside. The rewrite replaces
// the file only while it is still in doing/<owner>/.
func (c *Client) reapOne(s sessions.Session, r Reaped) error {
	path := c.Board.Path(sessions.Doing, c.Owner, s.ID)
	if err := c.setFields(path, map[string]string{
		"attempts":   strconv.Itoa(r.Attempt),
		"last_error": strconv.Quote(fmt.Sprintf("reaped from %s: %s (attempt %d)", r.Owner, r.Reason, r.Attempt)),
	}); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &Error{Op: "reap", ID: s.ID, From: path, Err: ErrSessionNotFound}
		}
		return &Error{Op: "reap", ID: s.ID, From: path, Err: err}
	}
	to := c.Board.Path(sessions.Todo, "", s.ID)
	if r.SetAside {
		to = c.Board.Path(sessions.Failed, "", s.ID)
	}
	reason := r.Reason
	if r.SetAside {
		reason += fmt.Sprintf("; set aside after %d attempts", r.Attempt)
	}
	m, err := c.rename("reap", s.ID, path, to, reason, false)
	if err != nil {
		return err
	}
	return c.commit(m)
}

func (l *Leases) reapedPath(owner, id string) string {
	return filepath.Join(l.Board.RuntimeDir(), "reaped", owner, id)
}

func (l *Leases) recordReaped(r Reaped) {
	p := l.reapedPath(r.Owner, r.ID)
	if l.Board.CheckDir(sessions.RuntimeDirName+"/reaped/"+r.Owner) != nil {
		return // a link: never written through
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	data, _ := json.Marshal(r)
	_ = fsx.WriteReplace(p, append(data, '\n'), 0o644, false)
}

// wasReaped returns the record of owner's session id having been reaped.
func (l *Leases) wasReaped(owner, id string) (Reaped, bool) {
	data, err := fsx.ReadRegular(l.reapedPath(owner, id))
	if err != nil || l.Board.CheckDir(sessions.RuntimeDirName+"/reaped/"+owner) != nil {
		return Reaped{}, false // none, or only through a link
	}
	var r Reaped
	if json.Unmarshal(data, &r) != nil {
		return Reaped{}, false
	}
	return r, true
}

// ownerSuperseded marks a fence that Fence recorded: the owner is alive,
// but its claim came after another owner's.
const ownerSuperseded OwnerState = "superseded"

// Fence records that owner lost its claim on session id for reason, as a
// reap does, so that the owner's later done, release or heartbeat of it
// fails with ErrClaimLost. pickup doctor --fix calls it before it discards
// the copy of a session that an owner claimed after another one had.
func (l *Leases) Fence(owner, id, reason string) error {
	return l.FenceAs(owner, id, ownerSuperseded, reason)
}

// FenceAs is Fence for an owner judged state (a shared board records so
// the reaps made in other clones, whose records are not shared).
func (l *Leases) FenceAs(owner, id string, state OwnerState, reason string) error {
	if err := sessions.ValidateOwner(owner); err != nil {
		return err
	}
	if err := l.Board.CheckDir(sessions.RuntimeDirName + "/reaped/" + owner); err != nil {
		return err // a link: never written through
	}
	p := l.reapedPath(owner, id)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(Reaped{ID: id, Owner: owner, State: state, Reason: reason, At: l.now()})
	if err != nil {
		return err
	}
	return fsx.WriteReplace(p, append(data, '\n'), 0o644, !l.Board.NoSync)
}
