package claim

// A shared board's arbiter (a git remote, a PostgreSQL database) decides
// whether a transition stands. New attaches it, so that the library does
// exactly what pickup's commands do; a board whose config.yaml says
// shared: and that has no arbiter attached refuses transitions rather
// than move sessions here only.

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/proc"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/arbiter/location"
	"github.com/pickup-dev/pickup/sessions"
)

// attach opens the arbiter that b's config.yaml names, unless b has one
// attached already (pickup's commands attach their own). A board that is
// not shared needs none.
func (c *Client) attach() error {
	b := c.Board
	if boardArbiter(b) != nil {
		return nil
	}
	cfg, err := b.Config()
	if cfg.Shared == "" {
		// Not shared, or config.yaml unreadable with no shared: in it:
		// the board directory decides, as ever.
		return nil
	}
	if err != nil {
		return fmt.Errorf("open board %s: %w", b.Dir, err)
	}
	c.sharedAt = cfg.Shared
	a, err := location.Open(context.Background(), b, cfg, location.Options{Leases: leaseBook{&Leases{Board: b}}, NoReady: true})
	if err != nil {
		return fmt.Errorf("open board %s (shared: %s in config.yaml): %w", b.Dir, location.Redact(cfg.Shared), err)
	}
	c.arb = a
	return nil
}

// Close releases the arbiter that New attached to the board (the
// connection to a PostgreSQL database, its helper); the board then
// refuses transitions until a new client attaches one. On a board that is
// not shared, or one whose arbiter the caller attached, it does nothing.
func (c *Client) Close() error {
	c.arbMu.Lock()
	a, lent := c.arb, c.lent
	c.arb, c.lent, c.inLine = nil, false, false
	c.arbMu.Unlock()
	if a == nil || lent {
		return nil
	}
	return a.Close()
}

// lendArbiter makes c run its arbiter steps (bring the board in line,
// answer again, name the winner, keep a wait in line) through a, which the
// caller attached to the board and closes itself: pickup's commands, so
// that they run exactly the library's steps, not a copy of them. inLine:
// the caller brought the board in line with a just now (the next step
// trusts that view rather than fetch again). warn takes what a wait
// survives (nil: dropped).
func (c *Client) lendArbiter(a arbiter.Arbiter, inLine bool, warn func(error)) {
	c.arbMu.Lock()
	defer c.arbMu.Unlock()
	c.arb, c.lent, c.inLine, c.warn = a, true, inLine, warn
}

// ready brings the board in line with a before an arbiter step, unless
// the caller that lent a did so just before (see lendArbiter).
func (c *Client) ready(ctx context.Context, a arbiter.Arbiter, trustRecent bool) error {
	c.arbMu.Lock()
	inLine := c.inLine
	c.inLine = false
	c.arbMu.Unlock()
	if inLine {
		return nil
	}
	return a.Ready(ctx, trustRecent)
}

// warned is where a wait's arbiter reports what it survives.
func (c *Client) warned() func(error) {
	c.arbMu.Lock()
	defer c.arbMu.Unlock()
	if c.warn == nil {
		return func(error) {}
	}
	return c.warn
}

// Ready brings the board directory in line with the arbiter that New
// attached (a git fetch, a database read), trusting no earlier view, as
// pickup's commands do before they judge owners or change the board. A
// long-running program calls it before each change it decides from the
// board's content: a reap, which judges an owner on another machine by
// the heartbeats this brings. On a board that is not shared, or whose
// arbiter the caller attached, it does nothing.
func (c *Client) Ready(ctx context.Context) error {
	return c.arbiterOf().Ready(ctx, false)
}

// arbiterOf is the arbiter this client attached (arbiter.Local if none:
// not shared, or attached by the caller, who brings the board in line
// itself).
func (c *Client) arbiterOf() arbiter.Arbiter {
	c.arbMu.Lock()
	defer c.arbMu.Unlock()
	if c.arb == nil {
		return arbiter.Local{}
	}
	return c.arb
}

// arbitrated runs the transition do as pickup's commands run one on a
// shared board, unless ctx is done already: the board brought in line first (trusting a fetch that
// another process of the clone made a moment ago), once more if the
// answer is one of answers and rests on that trusted view, and a loser
// told where the arbiter has the session.
func (c *Client) arbitrated(ctx context.Context, do func() (sessions.Session, error), answers ...error) (sessions.Session, error) {
	if err := ctx.Err(); err != nil {
		return sessions.Session{}, err // nothing moved, on any board
	}
	a := c.arbiterOf()
	if err := c.ready(ctx, a, true); err != nil {
		return sessions.Session{}, err
	}
	s, err := do()
	if again, ferr := a.AnswerAgain(ctx, err, answers...); ferr != nil {
		return sessions.Session{}, ferr
	} else if again {
		s, err = do()
	}
	if err != nil {
		err = c.settle(ctx, a, err)
	}
	return s, err
}

// settle names, for a session that another process of this clone moved
// first, where the arbiter has it once that process's move is settled.
func (c *Client) settle(ctx context.Context, a arbiter.Arbiter, err error) error {
	var e *Error
	if !errors.As(err, &e) || e.Arbiter || !errors.Is(err, ErrSessionNotAvailable) || e.Holder == "" {
		return err
	}
	if st, owner, ok := a.Settled(ctx, e.ID); ok {
		e.State, e.Holder = st, owner
	}
	return err
}

// checkArbiter refuses a transition on a shared board that has no arbiter
// attached: it would move the session here only, and another clone or
// machine could give it to a second owner.
func (c *Client) checkArbiter() error {
	if boardArbiter(c.Board) != nil {
		return nil
	}
	c.sharedOnce.Do(func() {
		if c.sharedAt == "" {
			cfg, _ := c.Board.Config()
			c.sharedAt = cfg.Shared
		}
	})
	if c.sharedAt == "" {
		return nil
	}
	return fmt.Errorf("%w: board %s is shared through %s (config.yaml), and no arbiter is attached to it (a client made without claim.New, or used after Close); "+
		"make the client with claim.New(board, owner), which attaches it, and call Client.Close when done",
		arbiter.ErrNotAttached, c.Board.Dir, redactedShared(c.sharedAt))
}

// redactedShared is shared: without a password.
func redactedShared(s string) string {
	if location.IsDatabase(s) {
		return location.Redact(s)
	}
	return s
}

// leaseBook is Leases as an arbiter needs them (see arbiter.Leases).
type leaseBook struct{ l *Leases }

func (k leaseBook) FenceStale(owner, id, reason string) error {
	return k.l.FenceAs(owner, id, OwnerStale, reason)
}

func (k leaseBook) HeldHere(owner string) (bool, error) {
	l, err := k.l.Get(owner)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil && len(l.Holders) > 0, err
}

func (k leaseBook) Renew(owner string) error {
	_, err := k.l.Heartbeat(owner)
	return err
}

func (k leaseBook) Holders(owner string) []proc.Process {
	l, err := k.l.Get(owner)
	if err != nil {
		return nil
	}
	return processesOf(l.Holders)
}

// boardArbiter is b's arbiter (set on the board through internal/boardhook
// by Open of an arbiter implementation), nil if none.
func boardArbiter(b *sessions.Board) func(e sessions.Event) error {
	return boardhook.ArbiterOf[sessions.Event](b)
}
