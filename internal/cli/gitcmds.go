package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// Git: the board's history (pickup log), commit mode and pickup sync.

// gitLockWait is how long a commit or a sync attempt waits for another
// pickup process's git work in the same repository (a sync may hold the
// lock through a slow push).
const gitLockWait = 2 * time.Minute

// gitLockKey is the named lock that serializes pickup's git commands in one
// repository, so that git's index.lock never surfaces between them.
func gitLockKey(repo *gitx.Repo) string { return "git:" + repo.Top }

// gitLock returns the function that takes the repository's git lock on
// board b.
func gitLock(b *sessions.Board, repo *gitx.Repo) func(ctx context.Context) (func() error, error) {
	locks := claim.BoardLocks(b)
	return func(ctx context.Context) (func() error, error) {
		return locks.Acquire(ctx, gitLockKey(repo), claim.WithLockWait(gitLockWait))
	}
}

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
	if !on {
		envOn, envSet, _ := commitEnv(c.getenvOr())
		if envSet {
			on = envOn
		} else {
			cfg, err := b.Config()
			if err != nil {
				return false, fmt.Errorf("commit mode: %w", err)
			}
			on = cfg.Commit
		}
	}
	if !on {
		return false, nil
	}
	repo, err := gitx.Find(context.Background(), b.Dir)
	if err != nil {
		return false, fmt.Errorf("commit mode is on, but the board %s is not in a git work tree (%w); turn commit mode off or move the board into the repository", b.Dir, err)
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

func (r *run) logCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "log",
		Usage:     "show the history of a session (or of the board) from the event log",
		UsageText: "pickup log [--last N] [--json] [ID]",
		Description: "Every transition appends one line to <board>/events.log (committed with the board):\n" +
			"time, session, operation, from, to, owner. `pickup log ID` shows that session's lines,\n" +
			"oldest first; without an id, the whole board's (--last N: only the newest N).\n" +
			"A line that is not an event (torn by a crash, edited by hand) is skipped with a warning.\n\n" +
			"Examples:\n   pickup log 2026-11-22_09-15-03\n   pickup log --last 20 --json",
		Flags: []ucli.Flag{
			&ucli.IntFlag{Name: "last", Aliases: []string{"n"}, Usage: "show only the newest N events"},
		},
		Action: func(c *ucli.Context) error {
			if c.NArg() > 1 {
				return usageError("log takes at most one session id")
			}
			if c.Int("last") < 0 {
				return usageError("--last must be 0 (everything) or more")
			}
			id := c.Args().First()
			if id != "" {
				if err := sessions.ValidateID(id); err != nil {
					return err
				}
			}
			b, err := r.board()
			if err != nil {
				return err
			}
			events, bad, err := b.Events(id)
			if err != nil {
				return fmt.Errorf("read %s: %w", b.EventLogPath(), err)
			}
			for _, l := range bad {
				fmt.Fprintf(r.env.Stderr, "pickup: warning: %s:%d is not an event (torn by a crash or edited by hand); skipped: %s\n", b.EventLogPath(), l.Line, sanitize(l.Text))
			}
			// A merge of two branches interleaves their lines: show time order.
			sort.SliceStable(events, func(i, j int) bool { return events[i].Time.Before(events[j].Time) })
			if n := c.Int("last"); n > 0 && len(events) > n {
				events = events[len(events)-n:]
			}
			if id != "" && len(events) == 0 {
				places, err := b.Locate(id)
				if err != nil {
					return err
				}
				if len(places) == 0 {
					return &claim.Error{Op: "log", ID: id, Err: claim.ErrSessionNotFound}
				}
				if !r.json {
					r.printf("no recorded history for %s (it is in %s; it has not moved since pickup began recording)\n", id, places[0].State)
					return nil
				}
			}
			if r.json {
				if events == nil {
					events = []sessions.Event{}
				}
				return r.printJSON(events)
			}
			if len(events) == 0 {
				r.printf("no history yet in %s\n", b.EventLogPath())
				return nil
			}
			tw := tabwriter.NewWriter(r.env.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tID\tOP\tFROM\tTO\tOWNER\tREASON")
			for _, e := range events {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.UTC().Format("2006-01-02T15:04:05Z"), e.ID,
					sanitize(e.Op), dash(sanitize(e.From)), sanitize(e.To), dash(e.Owner), sanitize(e.Reason))
			}
			return tw.Flush()
		},
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// syncOutput is what pickup sync --json prints.
type syncOutput struct {
	gitx.SyncResult
	Committed []string `json:"committed"` // pending board paths committed first
	NoRemote  bool     `json:"no_remote,omitempty"`
}

func (r *run) syncCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "sync",
		Usage:     "commit pending board changes, then pull --rebase and push, with retries",
		UsageText: "pickup sync [--remote NAME] [--branch NAME] [--attempts N] [--backoff DUR] [--json]",
		Description: "First commits the board's uncommitted changes (only the board's paths; what you have\n" +
			"staged stays staged). Then, if the repository has a remote: git pull --rebase --autostash\n" +
			"and git push, retried with exponential backoff and jitter (--backoff, doubling: 1s, 2s,\n" +
			"4s, 8s, each ±25%) up to --attempts times. A rebase that stops is aborted at once, so the\n" +
			"repository is never left half-rebased; a conflict is not retried. After the last failed\n" +
			"attempt it exits 1 and says what happened at each; your commits stay on your branch.\n" +
			"It syncs the branch checked out in the work tree that holds the board (the main work\n" +
			"tree), including your own commits on it. Other pickup processes' commits wait for it.\n\n" +
			"Examples:\n   pickup sync\n   pickup sync --remote origin --attempts 8",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "remote", Usage: "remote to sync with (default: the branch's upstream, else origin)"},
			&ucli.StringFlag{Name: "branch", Usage: "branch on the remote (default: the upstream's, else the current branch's name)"},
			&ucli.IntFlag{Name: "attempts", Value: gitx.DefaultAttempts, Usage: "attempts before giving up"},
			&ucli.DurationFlag{Name: "backoff", Value: gitx.DefaultDelay, Usage: "first pause between attempts; it doubles each time"},
		},
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("sync takes no arguments")
			}
			if c.Int("attempts") < 1 {
				return usageError("--attempts must be 1 or more")
			}
			if c.Duration("backoff") <= 0 {
				return usageError("--backoff must be a positive duration such as 1s")
			}
			b, err := r.board()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			repo, err := gitx.Find(ctx, b.Dir)
			if err != nil {
				return fmt.Errorf("sync: the board %s is not in a git work tree: %w", b.Dir, err)
			}
			lock := gitLock(b, repo)
			out := syncOutput{Committed: []string{}}
			commitPending := func(ctx context.Context) error {
				paths, err := commitPendingBoard(ctx, repo, b.Dir)
				out.Committed = append(out.Committed, paths...)
				return err
			}
			// Pending changes first: they are committed even without a remote.
			unlock, err := lock(ctx)
			if err != nil {
				return err
			}
			err = commitPending(ctx)
			if uerr := unlock(); err == nil {
				err = uerr
			}
			if err != nil {
				return fmt.Errorf("sync: commit pending board changes: %w", err)
			}
			remotes, err := repo.Run(ctx, "remote")
			if err != nil {
				return err
			}
			if strings.TrimSpace(remotes) == "" && c.String("remote") == "" {
				out.NoRemote = true
				if r.json {
					return r.printJSON(out)
				}
				r.printf("committed %d pending board change(s); the repository has no remote, so nothing was pulled or pushed\n", len(out.Committed))
				return nil
			}
			s := &gitx.Syncer{
				Repo: repo, Remote: c.String("remote"), Branch: c.String("branch"),
				Attempts: c.Int("attempts"), Delay: c.Duration("backoff"),
				Lock: lock, Prepare: commitPending,
				Logf: func(format string, args ...any) {
					fmt.Fprintf(r.env.Stderr, "pickup: %s\n", sanitize(fmt.Sprintf(format, args...)))
				},
			}
			res, err := s.Sync(ctx)
			out.SyncResult = res
			if err != nil {
				return &syncError{err: err, board: b.Dir}
			}
			if r.json {
				return r.printJSON(out)
			}
			for _, w := range res.Warnings {
				fmt.Fprintf(r.env.Stderr, "pickup: warning: %s\n", w)
			}
			if len(out.Committed) > 0 {
				r.printf("committed %d pending board change(s)\n", len(out.Committed))
			}
			how := "pulled and pushed"
			if !res.Pushed {
				how = "up to date"
			}
			if res.Before != res.After && !res.Pushed {
				how = "pulled; nothing to push"
			}
			r.printf("synced %s with %s %s: %s (attempt %d of %d)\n", res.LocalBranch, res.Remote, res.Branch, how, res.Attempts, s.Attempts)
			return nil
		},
	}
}

// commitPendingBoard commits the board's uncommitted changes, and only
// them: never runtime files (.pickup/, which a clone of a board made before
// the board had its own .gitignore does not ignore) nor temporary files,
// nor anything outside the board. It returns the paths committed.
func commitPendingBoard(ctx context.Context, repo *gitx.Repo, boardDir string) ([]string, error) {
	changes, err := repo.Status(ctx, boardDir)
	if err != nil || len(changes) == 0 {
		return nil, err
	}
	prefix, err := repo.Rel(boardDir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, c := range changes {
		rel, ok := strings.CutPrefix(c.Path, prefix+"/")
		if prefix == "." {
			rel, ok = c.Path, true
		}
		if ok && isBoardFile(rel) {
			files = append(files, c.Path)
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	return repo.CommitPaths(ctx, "pickup: commit pending board changes\n", files...)
}

// isBoardFile says whether a path relative to the board is one that is
// committed: not in .pickup/, not a dotfile (temporary files), except the
// board's own .gitignore and .gitattributes.
func isBoardFile(rel string) bool {
	if rel == sessions.GitignoreFile || rel == sessions.GitattributesFile {
		return true
	}
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

// syncError is a failed sync, with a hint that knows the board.
type syncError struct {
	err   error
	board string
}

func (e *syncError) Error() string { return e.err.Error() }
func (e *syncError) Unwrap() error { return e.err }

// Hint says what to do.
func (e *syncError) Hint() string {
	switch {
	case errors.Is(e.err, gitx.ErrConflict):
		return fmt.Sprintf("the remote changed the same files: run `git pull --rebase` by hand; for a session that both sides moved keep every copy (`git add -A %s`), `git rebase --continue`, then `pickup doctor --fix` and `pickup sync`", e.board)
	case errors.Is(e.err, context.Canceled):
		return "interrupted: no rebase was left in progress; run `pickup sync` again"
	}
	var h interface{ Hint() string }
	if errors.As(e.err, &h) {
		return h.Hint()
	}
	return ""
}
