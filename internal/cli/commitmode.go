package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// Commit mode: each transition becomes one git commit of exactly the paths
// it moved and the event log.

// commitEnv reads $PICKUP_COMMIT: set, unset, or invalid.
func commitEnv(getenv func(string) string) (on, set bool, err error) {
	switch v := strings.ToLower(strings.TrimSpace(getenv("PICKUP_COMMIT"))); v {
	case "":
		return false, false, nil
	case "1", "true", "yes", "on":
		return true, true, nil
	case "0", "false", "no", "off":
		return false, true, nil
	default:
		return false, false, usageError("$PICKUP_COMMIT=%q: use 1 to commit every transition, 0 not to", v)
	}
}

// committer makes each transition of commit mode one git commit holding
// exactly the paths it moved and the event log, and collects what went
// wrong: a transition has happened whatever becomes of its commit, so a
// failed commit is reported when the command ends (exit 1), never hidden.
// Its zero value is ready; it must not be copied after first use.
type committer struct {
	mu      sync.Mutex
	getenv  func(string) string
	flag    bool // --commit
	decided bool
	on      bool
	failed  error // why commit mode could not start
	// cfg is the board's config.yaml, checked already (see run.board);
	// nil: read it when needed.
	cfg     *sessions.Config
	repo    *gitx.Repo
	lock    func(ctx context.Context) (func() error, error)
	errs    []error  // commits that failed
	warns   []string // events that could not be logged
	commits int
}

// attach prepares commit mode for board b; flag is --commit. Whether it is
// on is decided at the first transition (so that read-only commands never
// run git): --commit, else $PICKUP_COMMIT, else commit: in config.yaml.
func (c *committer) attach(b *sessions.Board, flag bool, getenv func(string) string) error {
	if _, _, err := commitEnv(getenv); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flag, c.getenv = c.flag || flag, getenv
	return nil
}

// useConfig gives c the board's settings, read and checked already, so
// that deciding does not read config.yaml again.
func (c *committer) useConfig(cfg sessions.Config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cfg = &cfg
}

// ready decides commit mode now, before the command changes anything, and
// returns why it cannot start if it is on and cannot (a *commitModeError
// for a board outside a repository).
func (c *committer) ready(b *sessions.Board) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.decide(b)
	return err
}

// decide says whether transitions on b are committed, finding the
// repository the first time. It is called with c.mu held.
func (c *committer) decide(b *sessions.Board) (bool, error) {
	if c.decided {
		return c.on, c.failed
	}
	c.decided = true
	on, err := c.start(b)
	c.on, c.failed = on, err
	return on, err
}

func (c *committer) start(b *sessions.Board) (bool, error) {
	on := c.flag
	envOn, envSet, _ := commitEnv(c.getenvOr())
	if !on {
		if envSet {
			on = envOn
		} else {
			cfg := c.cfg
			if cfg == nil {
				read, err := b.Config()
				if err != nil {
					return false, fmt.Errorf("commit mode: %w", err)
				}
				cfg = &read
			}
			on = cfg.Commit
		}
	}
	if !on {
		return false, nil
	}
	repo, err := gitx.Find(context.Background(), b.Dir)
	if err != nil {
		source, fix := commitSource(c.flag, envSet, b, c.getenvOr())
		return false, &commitModeError{source: source, fix: fix, dir: b.Dir, err: err}
	}
	c.repo, c.lock = repo, gitLock(b, repo)
	return true, nil
}

func (c *committer) getenvOr() func(string) string {
	if c.getenv != nil {
		return c.getenv
	}
	return os.Getenv
}

// commitMessage is a transition's commit message: the subject says what
// happened to which session and who did it.
func commitMessage(ev sessions.Event) string {
	verb := ev.Op
	switch ev.Op {
	case "next":
		verb = "claim"
	}
	subject := fmt.Sprintf("pickup: %s %s", verb, ev.ID)
	if ev.Owner != "" {
		subject += " (" + ev.Owner + ")"
	}
	from := ev.From
	if from == "" {
		from = "(new)"
	}
	body := fmt.Sprintf("%s -> %s", from, ev.To)
	if ev.Reason != "" {
		body += "\n" + ev.Reason
	}
	return subject + "\n\n" + body + "\n"
}

// onEvent is the board's OnEvent hook: it runs after every transition.
func (c *committer) onEvent(b *sessions.Board, ev sessions.Event, logErr error) {
	if logErr != nil {
		c.mu.Lock()
		c.warns = append(c.warns, fmt.Sprintf("%s %s happened but is missing from %s: %v", ev.Op, ev.ID, sessions.EventLogFile, logErr))
		c.mu.Unlock()
	}
	c.mu.Lock()
	on, err := c.decide(b)
	repo, lock := c.repo, c.lock
	c.mu.Unlock()
	if err == nil && on {
		err = commitPaths(repo, lock, commitMessage(ev), ev.Src, ev.Dst, b.EventLogPath())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("%s %s: %w", ev.Op, ev.ID, err))
	} else if on {
		c.commits++
	}
}

// hook returns onEvent bound to board b, for Board.OnEvent.
func (c *committer) hook(b *sessions.Board) func(sessions.Event, error) {
	return func(ev sessions.Event, logErr error) { c.onEvent(b, ev, logErr) }
}

// commitPaths commits paths under the repository's git lock.
func commitPaths(repo *gitx.Repo, lock func(context.Context) (func() error, error), msg string, paths ...string) error {
	ctx := context.Background()
	unlock, err := lock(ctx)
	if err != nil {
		return err
	}
	_, err = repo.CommitPaths(ctx, msg, paths...)
	if uerr := unlock(); err == nil && uerr != nil {
		err = uerr
	}
	return err
}

// commitError reports transitions that happened but were not committed.
type commitError struct{ errs []error }

func (e *commitError) Error() string {
	parts := make([]string, len(e.errs))
	for i, err := range e.errs {
		parts[i] = err.Error()
	}
	return fmt.Sprintf("%d transition(s) happened on the board but were not committed: %s", len(e.errs), strings.Join(parts, "; "))
}

func (e *commitError) Unwrap() []error { return e.errs }

// Hint says what to do.
func (e *commitError) Hint() string {
	h := "the board itself is correct (the sessions are where the output says) and the changes wait uncommitted in the work tree"
	var inner interface{ Hint() string }
	for _, err := range e.errs {
		if errors.As(err, &inner) {
			h += "; " + inner.Hint()
			break
		}
	}
	return h + "; then `pickup sync` commits what is pending"
}

// finish reports, when the command ends, events that were not logged
// (warnings) and transitions that were not committed: an error of their
// own (exit 1) if the command succeeded, warnings if it failed anyway.
func (c *committer) finish(r *run, err error) error {
	c.mu.Lock()
	warns, errs := c.warns, c.errs
	c.mu.Unlock()
	for _, w := range warns {
		fmt.Fprintf(r.env.Stderr, "pickup: warning: %s\n", sanitize(w))
	}
	if len(warns) > 0 {
		fmt.Fprintf(r.env.Stderr, "pickup: hint: once the event log can be written again (free some disk space), `pickup doctor --fix` records every move it missed\n")
	}
	if len(errs) == 0 {
		return err
	}
	cerr := &commitError{errs: errs}
	if err == nil {
		return cerr
	}
	fmt.Fprintf(r.env.Stderr, "pickup: warning: %s\n", sanitize(cerr.Error()))
	return err
}
