// Package retry rides over what did not happen at an arbiter: a database
// restarting, a git daemon down for a moment, a connection reset before
// a request reached the other side. Every arbiter (internal/arbiter/
// postgres's requests, internal/gitx's commands that talk to a remote)
// tries a transient failure again through Do, with the same backoff and
// the same budget (the board's network_timeout), so that a restart or a
// failover shorter than the deadline costs an agent nothing but the wait.
//
// The guarantee: Do calls try again only for an error its Policy's
// Transient says did not happen, and never sleeps past the budget: the
// last error comes back (as a *GaveUpError once it was tried more than
// once) before the budget is spent, unless a try takes longer than the
// slowest one before it. Its limit: whether a
// failure happened is the caller's to judge; a request whose outcome is
// unknown (a commit whose answer was lost) must not be called transient.
package retry

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// Backoff between tries: the first wait is about First, each next one
// doubles up to Max; each is drawn in [½, 1½) of that (jitter, so that a
// fleet of agents does not reconnect in step).
const (
	First = 100 * time.Millisecond
	Max   = 2 * time.Second
)

// Policy is how Do retries. Its zero value never retries.
type Policy struct {
	// Budget is how long Do goes on trying, counted from its first try
	// (the board's network_timeout).
	Budget time.Duration
	// Transient reports whether err did not happen at the other side, so
	// that trying again is safe.
	Transient func(err error) bool
	// Now, Sleep and Jitter replace the clock, the wait and the random
	// draw in tests (nil: the real ones). Jitter returns a number in
	// [0, n).
	Now    func() time.Time
	Sleep  func(ctx context.Context, d time.Duration) error
	Jitter func(n int64) int64
}

// GaveUpError is the last failure of a request tried Tries times in
// Spent, which the budget did not leave room to try again.
type GaveUpError struct {
	Tries  int
	Spent  time.Duration
	Budget time.Duration
	Err    error
}

func (e *GaveUpError) Error() string {
	return fmt.Sprintf("%v (gave up after %d tries in %s: network_timeout %s)", e.Err, e.Tries, e.Spent.Round(time.Millisecond), e.Budget)
}

func (e *GaveUpError) Unwrap() error { return e.Err }

// Do calls try (n is 1 for the first try) until it succeeds, fails with
// an error that is not transient, ctx ends, or the next wait and a try as
// long as the slowest so far would go past the budget: a try that has no
// time left to finish is not started, so that the answer is the last
// failure (a refusal, which says what is wrong) rather than the deadline
// cutting a try short on a slow machine.
func (p Policy) Do(ctx context.Context, try func(n int) error) error {
	start := p.now()
	var slowest time.Duration
	for n := 1; ; n++ {
		began := p.now()
		err := try(n)
		if err == nil || p.Transient == nil || !p.Transient(err) || ctx.Err() != nil {
			return err
		}
		slowest = max(slowest, p.now().Sub(began))
		wait := p.Backoff(n)
		spent := p.now().Sub(start)
		if spent+wait+slowest > p.Budget {
			if n == 1 {
				return err
			}
			return &GaveUpError{Tries: n, Spent: spent, Budget: p.Budget, Err: err}
		}
		if serr := p.sleep(ctx, wait); serr != nil {
			return err // ctx ended: the last failure is the answer
		}
	}
}

// Backoff is the wait after try n.
func (p Policy) Backoff(n int) time.Duration {
	d := First
	for i := 1; i < n && d < Max; i++ {
		d *= 2
	}
	d = min(d, Max)
	return d/2 + time.Duration(p.jitter(int64(d)))
}

func (p Policy) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p Policy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	return Pause(ctx, d)
}

// Pause waits d, or until ctx ends (its error then).
func Pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (p Policy) jitter(n int64) int64 {
	if p.Jitter != nil {
		return p.Jitter(n)
	}
	return rand.Int64N(n)
}
