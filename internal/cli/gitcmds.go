package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// Git: the board's history (pickup log) and pickup sync; commit mode is in
// commitmode.go.

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
					sanitize(e.Op), dash(sanitize(e.From)), sanitize(e.To), dash(sanitize(e.Owner)), sanitize(e.Reason))
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
	// MovedClaims: claims of this clone that the pull took away or doubled.
	MovedClaims []movedClaim `json:"moved_claims,omitempty"`
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
			if r.shared.isShared() {
				return r.syncShared(b)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			repo, err := r.findRepo(ctx, b.Dir)
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
			watch := newClaimWatch(repo, b) // what the pulls do to claims here
			s := &gitx.Syncer{
				Repo: repo, Remote: c.String("remote"), Branch: c.String("branch"),
				Attempts: c.Int("attempts"), Delay: c.Duration("backoff"),
				Lock: lock, Prepare: watch.prepare(commitPending),
				Logf: func(format string, args ...any) {
					fmt.Fprintf(r.env.Stderr, "pickup: %s\n", sanitize(fmt.Sprintf(format, args...)))
				},
			}
			res, err := s.Sync(ctx)
			b.MarkChanged(sessions.Todo) // pulled sessions: the next next lists todo/
			out.SyncResult = res
			out.MovedClaims = watch.moved(context.WithoutCancel(ctx))
			r.warnMoved(out.MovedClaims)
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
