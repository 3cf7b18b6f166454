package gitremote

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/sessions"
)

// Fresh is how recent a fetch of another process of the clone spares a
// claim or a transition its own (see Arbiter.Ready). Well under a
// second: next to a stale period of minutes a peer's heartbeat is never
// judged on an old view, and a session made elsewhere that second is left
// for the next claim.
const Fresh = time.Second

// Arbiter is a git remote's board branch as an arbiter.Arbiter.
type Arbiter struct {
	SB  *Board
	cfg sessions.Config
	// fetch is shared_fetch: how often a wait fetches.
	fetch time.Duration
	mu    sync.Mutex
	// skipped: Ready trusted another process's fetch (see AnswerAgain).
	skipped bool
}

// NewArbiter is sb as the arbiter of its board, whose config.yaml says cfg.
func NewArbiter(sb *Board, cfg sessions.Config) *Arbiter {
	fetch := DefaultFetch
	if cfg.SharedFetch > 0 {
		fetch = cfg.SharedFetch
	}
	return &Arbiter{SB: sb, cfg: cfg, fetch: fetch}
}

// FlushPending pushes (or undoes) the transitions that processes of this
// clone queued and were killed before they saw through. It runs no git
// unless there is such a request.
func (a *Arbiter) FlushPending(ctx context.Context) error {
	if !Pending(filepath.Dir(a.SB.dir), false) {
		return nil
	}
	arb := boardhook.ArbiterOf[sessions.Event](a.SB.B)
	defer boardhook.SetArbiter(a.SB.B, arb)
	return a.SB.Flush(ctx)
}

// Ready checks that config.yaml is what the clone joined and fetches (one
// fetch; with trustRecent, none if another process of the clone fetched
// within Fresh: the push is the compare-and-swap, and a refused one
// fetches).
func (a *Arbiter) Ready(ctx context.Context, trustRecent bool) error {
	if err := a.SB.CheckIdentity(ctx, a.cfg, filepath.Join(a.SB.B.Dir, sessions.ConfigFile)); err != nil {
		return IdentityRefusal(a.SB.B, err)
	}
	if trustRecent && a.SB.FetchedWithin(Fresh) {
		a.mu.Lock()
		a.skipped = true
		a.mu.Unlock()
		return nil
	}
	if _, err := a.SB.Refresh(ctx); err != nil {
		if errors.Is(err, ErrNoBoardBranch) {
			return &arbiter.Advice{Err: err, Code: 8,
				Fix: fmt.Sprintf("run `pickup init --shared %s` in one clone to put the board on the remote; nothing was changed", a.cfg.Shared)}
		}
		return err
	}
	return nil
}

// IdentityRefusal is the error of a shared board whose settings are not
// what the clone joined, or whose branch is the code's (named with its
// line in config.yaml).
func IdentityRefusal(b *sessions.Board, err error) error {
	var be *BranchError
	if errors.As(err, &be) {
		where := filepath.Join(b.Dir, sessions.ConfigFile)
		if line := b.ConfigLine("shared_branch"); line > 0 {
			where = fmt.Sprintf("%s:%d", where, line)
		}
		return &arbiter.Advice{Err: fmt.Errorf("%s: %w", where, err), Code: 2,
			Fix: "write shared_branch: pickup there (a branch of its own); nothing was changed"}
	}
	return err
}

// AnswerAgain fetches if Ready trusted another process's fetch and err is
// one of answers, so that the answer is the remote's own.
func (a *Arbiter) AnswerAgain(ctx context.Context, err error, answers ...error) (bool, error) {
	if err == nil || !slices.ContainsFunc(answers, func(x error) bool { return errors.Is(err, x) }) {
		return false, nil
	}
	a.mu.Lock()
	skipped := a.skipped
	a.skipped = false
	a.mu.Unlock()
	if !skipped {
		return false, nil
	}
	return a.SB.Refresh(ctx)
}

// Settled is where the remote has session id once the push of another
// process of this clone that moved it first is settled (so that a loser
// names the winner at the remote, not a local racer that lost there too).
func (a *Arbiter) Settled(ctx context.Context, id string) (sessions.State, string, bool) {
	return a.SB.Settled(ctx, id, 30*time.Second)
}

// Heartbeat pushes owner's heartbeat ref.
func (a *Arbiter) Heartbeat(ctx context.Context, owner string, every time.Duration) error {
	_, err := a.SB.Heartbeat(ctx, owner, every)
	return err
}

// Watch fetches every shared_fetch (default 10 s) until ctx ends: applying
// the fetch writes sessions made or released in other clones into todo/.
func (a *Arbiter) Watch(ctx context.Context, warn func(error)) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(a.fetch)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := a.SB.Refresh(ctx); err != nil && ctx.Err() == nil {
					warn(err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Where is the remote and its board branch.
func (a *Arbiter) Where() string { return a.SB.Remote + "/" + a.SB.Branch }

// Close detaches the arbiter from its board (a git remote holds nothing
// open).
func (a *Arbiter) Close() error {
	boardhook.ClearArbiter(a.SB.B)
	return nil
}

var _ arbiter.Arbiter = (*Arbiter)(nil)
