package gitx

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Defaults of Syncer.
const (
	DefaultAttempts = 5
	DefaultDelay    = time.Second
	DefaultMaxDelay = time.Minute
)

// Backoff is the pause before retry number retry (1 for the pause after
// the first failed attempt): first·2^(retry-1), at most max, jittered by
// ±25% with r in [0, 1) (r = 0.5 gives the exact value). With first = 1 s
// the pauses are 1 s, 2 s, 4 s, 8 s … each ±25%.
func Backoff(first, max time.Duration, retry int, r float64) time.Duration {
	d := first
	for i := 1; i < retry && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	return time.Duration(float64(d) * (0.75 + 0.5*r))
}

// Syncer brings a branch in line with its remote: pull --rebase, then
// push, retried with exponential backoff and jitter. A rebase that stops is
// aborted at once, so the repository is never left half-rebased, and a
// sync that fails in the end says what happened at every attempt: local
// commits are never dropped, and nothing fails silently.
type Syncer struct {
	Repo *Repo
	// Remote is the remote to sync with (default: the branch's upstream
	// remote, else "origin", else the only remote). Branch is the branch
	// on the remote (default: the upstream's, else the local branch's
	// name).
	Remote, Branch string
	// Attempts bounds the attempts (default DefaultAttempts). Delay is the
	// first pause (default DefaultDelay); each further pause doubles, up to
	// MaxDelay (default DefaultMaxDelay); each is jittered by ±25%.
	Attempts        int
	Delay, MaxDelay time.Duration
	// Sleep pauses (it must return early with ctx's error); Rand returns a
	// number in [0, 1) for the jitter. Both replaceable for tests.
	Sleep func(ctx context.Context, d time.Duration) error
	Rand  func() float64
	// Lock, if set, is held during each attempt (not during the pauses),
	// so that other git users of the repository (pickup's commit mode)
	// take turns with the sync.
	Lock func(ctx context.Context) (unlock func() error, err error)
	// Prepare, if set, runs under the lock before each attempt (pickup
	// commits pending board changes there).
	Prepare func(ctx context.Context) error
	// Logf, if set, receives a line for each failed attempt.
	Logf func(format string, args ...any)
}

// SyncResult says what a sync did.
type SyncResult struct {
	Remote      string   `json:"remote"`
	Branch      string   `json:"branch"`       // on the remote
	LocalBranch string   `json:"local_branch"` // checked out here
	Attempts    int      `json:"attempts"`
	Before      string   `json:"before"` // HEAD before
	After       string   `json:"after"`  // HEAD after
	Pushed      bool     `json:"pushed"` // false: the remote was up to date
	Failures    []string `json:"failures,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
}

// SyncError is a sync whose every attempt failed, or one that stopped on
// a failure that retrying cannot mend (a conflict, a detached HEAD, no
// remote, a rebase the user has in progress).
type SyncError struct {
	Remote, Branch string
	Attempts       int
	Failures       []string // what happened, attempt by attempt
	Err            error    // the last failure
	Head           string   // local HEAD, as the sync leaves it
	LocalBranch    string
	Clean          bool // no rebase in progress
}

func (e *SyncError) Error() string {
	if e.Attempts == 0 {
		return fmt.Sprintf("sync failed before its first attempt: %v", e.Err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "sync with %s %s failed after %d attempt(s)", e.Remote, e.Branch, e.Attempts)
	if len(e.Failures) > 0 {
		b.WriteString(": ")
		b.WriteString(strings.Join(e.Failures, "; "))
	} else if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.Clean && e.Head != "" {
		fmt.Fprintf(&b, "; nothing was lost: no rebase is in progress and %s is still at %s with all its commits", orDefault(e.LocalBranch, "HEAD"), short(e.Head))
	}
	return b.String()
}

func (e *SyncError) Unwrap() []error { return []error{ErrSyncFailed, e.Err} }

// Hint says what to do.
func (e *SyncError) Hint() string {
	var h interface{ Hint() string }
	if errors.As(e.Err, &h) {
		return h.Hint()
	}
	return "run the sync again later; if it keeps failing, run `git pull --rebase` and `git push` by hand to see git's full messages"
}

// ConflictError is a pull --rebase that stopped on conflicting changes; the
// rebase was aborted.
type ConflictError struct {
	Paths   []string
	Summary string
}

func (e *ConflictError) Error() string {
	msg := ErrConflict.Error()
	if len(e.Paths) > 0 {
		msg += " in " + strings.Join(e.Paths, ", ")
	}
	if e.Summary != "" {
		msg += " (" + e.Summary + ")"
	}
	return msg + "; the rebase was aborted, and not retried: a conflict does not go away by waiting"
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// Hint says what to do.
func (e *ConflictError) Hint() string {
	return "the remote changed the same files: run `git pull --rebase` by hand and resolve the conflicts (for a session that both sides moved, keep every copy with `git add`), `git rebase --continue`, then `pickup doctor --fix` and `pickup sync`"
}

// permanent marks a failure that retrying cannot mend.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

func (s *Syncer) sleep(ctx context.Context, d time.Duration) error {
	if s.Sleep != nil {
		return s.Sleep(ctx, d)
	}
	return sleepCtx(ctx, d)
}

func (s *Syncer) rand() float64 {
	if s.Rand != nil {
		return s.Rand()
	}
	return rand.Float64()
}

func (s *Syncer) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// Sync pulls with rebase and pushes, retrying as the Syncer says.
func (s *Syncer) Sync(ctx context.Context) (SyncResult, error) {
	r := s.Repo
	res := SyncResult{Before: r.Head(ctx)}
	fail := func(attempts int, failures []string, err error) (SyncResult, error) {
		res.Attempts = attempts
		res.Failures = failures
		return res, &SyncError{Remote: orDefault(res.Remote, "(no remote)"), Branch: res.Branch, Attempts: attempts, Failures: failures, Err: err,
			Head: r.Head(context.WithoutCancel(ctx)), LocalBranch: res.LocalBranch, Clean: !r.RebaseInProgress()}
	}
	local, err := r.Branch(ctx)
	if err != nil {
		return fail(0, nil, err)
	}
	res.LocalBranch = local
	res.Remote, res.Branch, err = s.target(ctx, local)
	if err != nil {
		return fail(0, nil, err)
	}
	attempts := s.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	first, maxDelay := s.Delay, s.MaxDelay
	if first <= 0 {
		first = DefaultDelay
	}
	if maxDelay <= 0 {
		maxDelay = DefaultMaxDelay
	}
	var failures []string
	for attempt := 1; ; attempt++ {
		pushed, warnings, err := s.attempt(ctx, res.Remote, res.Branch)
		res.Warnings = append(res.Warnings, warnings...)
		if err == nil {
			res.Attempts, res.Pushed, res.Failures = attempt, pushed, failures
			res.After = r.Head(ctx)
			return res, nil
		}
		failures = append(failures, fmt.Sprintf("attempt %d: %v", attempt, err))
		var p permanent
		if errors.As(err, &p) || ctx.Err() != nil || attempt >= attempts {
			if errors.As(err, &p) {
				err = p.err
			}
			return fail(attempt, failures, err)
		}
		d := Backoff(first, maxDelay, attempt, s.rand())
		s.logf("sync: attempt %d of %d failed: %v; retrying in %s", attempt, attempts, err, d.Round(time.Millisecond))
		if err := s.sleep(ctx, d); err != nil {
			failures = append(failures, fmt.Sprintf("interrupted while waiting to retry: %v", err))
			return fail(attempt, failures, err)
		}
	}
}

// target finds the remote and the branch on it.
func (s *Syncer) target(ctx context.Context, local string) (remote, branch string, err error) {
	r := s.Repo
	config := func(key string) string {
		out, err := r.Run(ctx, "config", "--get", key)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(out)
	}
	remote, branch = s.Remote, s.Branch
	upstream := config("branch." + local + ".remote")
	if remote == "" && upstream != "" && upstream != "." {
		remote = upstream
	}
	if remote == "" {
		out, err := r.Run(ctx, "remote")
		if err != nil {
			return "", "", err
		}
		remotes := strings.Fields(out)
		switch {
		case len(remotes) == 0:
			return "", "", fmt.Errorf("%w: the repository at %s has no remote; add one with `git remote add origin URL`", ErrNoRemote, r.Top)
		case contains(remotes, "origin"):
			remote = "origin"
		case len(remotes) == 1:
			remote = remotes[0]
		default:
			return "", "", fmt.Errorf("%w: several remotes (%s) and no upstream for %s; choose one", ErrNoRemote, strings.Join(remotes, ", "), local)
		}
	}
	if branch == "" && remote == upstream {
		branch = strings.TrimPrefix(config("branch."+local+".merge"), "refs/heads/")
	}
	if branch == "" {
		branch = local
	}
	return remote, branch, nil
}

// attempt is one pull --rebase and push, under the lock.
func (s *Syncer) attempt(ctx context.Context, remote, branch string) (pushed bool, warnings []string, err error) {
	r := s.Repo
	// Moves of session files wait while the pull rewrites the work tree
	// (see Gate); a move in flight finishes first.
	open, err := (&Gate{Top: r.Top, GitDir: r.GitDir}).Close(ctx)
	if err != nil {
		return false, nil, err
	}
	defer open()
	if s.Lock != nil {
		unlock, err := s.Lock(ctx)
		if err != nil {
			return false, nil, err
		}
		defer func() {
			if uerr := unlock(); uerr != nil && err == nil {
				err = uerr
			}
		}()
	}
	if r.RebaseInProgress() {
		return false, nil, permanent{fmt.Errorf("%w in %s, and sync does not touch a rebase it did not start: finish it (`git rebase --continue`) or abort it (`git rebase --abort`), then sync again", ErrRebaseInProgress, r.Top)}
	}
	if s.Prepare != nil {
		if err := s.Prepare(ctx); err != nil {
			return false, nil, lockFailure(err)
		}
	}
	// The user's branch may bring much to pull: the pull and the push
	// together may take LongTransfers times the network deadline, while
	// each still gives up at once a transfer that stalls that long.
	ctx, cancel := context.WithTimeout(ctx, LongTransfers*r.netTimeout())
	defer cancel()
	// No directory rename detection: a clone whose claims emptied todo/
	// would have git "move" every session the remote added to todo/ into
	// that owner's doing/ folder (reported as a conflict).
	out, err := r.RunLocked(ctx, "-c", "merge.directoryRenames=false", "pull", "--rebase", "--autostash", "--no-recurse-submodules", remote, branch)
	var ge *Error
	errors.As(err, &ge)
	if strings.Contains(out, "Applying autostash resulted in conflicts") || (ge != nil && strings.Contains(ge.Stderr, "Applying autostash resulted in conflicts")) {
		warnings = append(warnings, "your uncommitted changes conflicted with the pulled commits and were kept in the stash: `git stash list`, then `git stash pop` and resolve")
	}
	switch {
	case err == nil:
	case r.RebaseInProgress():
		return false, warnings, s.abort(ctx, ge)
	case ge != nil && strings.Contains(ge.Stderr, "couldn't find remote ref"):
		// The branch is not on the remote yet: the push creates it.
	default:
		if errors.Is(err, ErrIndexLocked) {
			return false, warnings, lockFailure(err)
		}
		var te *NetTimeoutError
		if errors.As(err, &te) {
			return false, warnings, permanent{fmt.Errorf("pull --rebase from %s %s failed: %w", remote, branch, te)}
		}
		return false, warnings, fmt.Errorf("pull --rebase from %s %s failed: %s", remote, branch, summary(err))
	}
	// Push needs no index: another git's index.lock does not stop it.
	out, err = r.Run(ctx, "push", "--porcelain", remote, "HEAD:refs/heads/"+branch)
	if err != nil {
		if ge, ok := err.(*Error); ok && strings.Contains(ge.Stdout+ge.Stderr, "[rejected]") {
			return false, warnings, fmt.Errorf("push to %s %s rejected: the remote got new commits since the pull (%s)", remote, branch, summary(err))
		}
		var te *NetTimeoutError
		if errors.As(err, &te) {
			return false, warnings, permanent{fmt.Errorf("push to %s %s failed: %w", remote, branch, te)}
		}
		return false, warnings, fmt.Errorf("push to %s %s failed: %s", remote, branch, summary(err))
	}
	return !strings.Contains(out, "[up to date]"), warnings, nil
}

// abort aborts the rebase that a pull stopped, and tells a conflict apart
// from other stops.
func (s *Syncer) abort(ctx context.Context, ge *Error) error {
	r := s.Repo
	// Even when ctx has ended (an interrupt), the rebase must not stay.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var paths []string
	if out, err := r.Run(actx, "diff", "--name-only", "-z", "--diff-filter=U"); err == nil {
		for _, p := range strings.Split(out, "\x00") {
			if p != "" {
				paths = append(paths, p)
			}
		}
	}
	what := "pull --rebase stopped"
	if ge != nil {
		what += ": " + ge.Summary()
	}
	if _, err := r.RunLocked(actx, "rebase", "--abort"); err != nil || r.RebaseInProgress() {
		if err == nil {
			err = errors.New("the rebase is still in progress")
		}
		return permanent{fmt.Errorf("%s, and `git rebase --abort` failed: %v; run `git rebase --abort` in %s by hand before anything else", what, summary(err), r.Top)}
	}
	if len(paths) > 0 || (ge != nil && strings.Contains(ge.Stdout+ge.Stderr, "CONFLICT")) {
		sum := ""
		if ge != nil {
			sum = ge.Summary()
		}
		return permanent{&ConflictError{Paths: paths, Summary: sum}}
	}
	return fmt.Errorf("%s; the rebase was aborted", what)
}

// lockFailure makes a lock file left by a crashed git permanent: waiting
// does not remove it. One that another git holds may go away: retry.
func lockFailure(err error) error {
	var le *IndexLockError
	if errors.As(err, &le) && le.Stale {
		return permanent{err}
	}
	return err
}

func summary(err error) string {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.Summary()
	}
	return err.Error()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
