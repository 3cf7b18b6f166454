package claim

import (
	"errors"
	"fmt"
	"os"

	"github.com/pickup-dev/pickup/sessions"
)

// A run may settle its session itself: the command that pickup work
// starts can run `pickup done` or `pickup release` of the session it was
// given (it acts as the pool's owner). That is the run's outcome, not a
// lost claim, and the pool must then leave the session where the run put
// it: marking it done, or counting a failure, would act on a session the
// run already handed on.

// settledByRun reports what became of session id, which the pool's owner
// held when its run began, if the run no longer holds it: ok is false
// while it is still in doing/<owner>/. Only conclusive evidence counts: a
// session in done/ or todo/ that no reap took from this owner was moved
// there by this owner, that is by the run (the pool itself moves nothing
// while a run goes on).
func (c *Client) settledByRun(id string) (ev string, ok bool, err error) {
	if info, lerr := os.Lstat(c.Board.Path(sessions.Doing, c.Owner, id)); lerr == nil && info.Mode().IsRegular() {
		return "", false, nil
	}
	if r, reaped := (&Leases{Board: c.Board}).wasReaped(c.Owner, id); reaped {
		return "lost", true, fmt.Errorf("%w: reaped while the command ran (%s)", ErrClaimLost, r.Reason)
	}
	state, holder, werr := c.whereIs(id)
	switch {
	case errors.Is(werr, ErrSessionNotFound):
		return "lost", true, fmt.Errorf("%w: it is nowhere on the board since the command ran", ErrSessionNotFound)
	case state == sessions.Done:
		return "done", true, nil
	case state == sessions.Todo:
		return "released", true, nil
	case state == sessions.Doing:
		return "lost", true, fmt.Errorf("%w: it is held by %s since the command ran", ErrSessionNotAvailable, holder)
	}
	return "lost", true, fmt.Errorf("%w: it is in %s since the command ran", ErrSessionNotAvailable, state)
}
