package claim

import (
	"context"
	"errors"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// RequeueOptions choose which set-aside sessions RequeueSetAside returns.
type RequeueOptions struct {
	// Since, if set, takes only the sessions set aside at or after it (see
	// sessions.SetAside.Since): those a broken run sent to failed/, say,
	// and not the ones that failed on their own merits earlier.
	Since time.Time
	// DryRun reports what would be requeued and changes nothing.
	DryRun bool
}

// Requeued is one session that RequeueSetAside returned (or, in a dry run,
// would return) from failed/ to todo/.
type Requeued struct {
	// Was is the session as it was in failed/.
	Was sessions.SetAside
	// Now is the session in todo/ (zero in a dry run or on error).
	Now sessions.Session
	// Err is why it could not be requeued (a copy already in todo/).
	Err error
}

// RequeueSetAside returns the sessions set aside in failed/ (all of them,
// or those set aside since opts.Since) to todo/ with their attempts reset,
// in board order, each as Requeue does. A session that cannot be requeued
// is reported in its entry and the others go on; the error returned is the
// first such. A session that left failed/ meanwhile (another process
// requeued it) is left out.
func (c *Client) RequeueSetAside(ctx context.Context, opts RequeueOptions) ([]Requeued, error) {
	list, err := c.Board.ListSetAside()
	if err != nil {
		return nil, &Error{Op: "requeue", Err: err}
	}
	var out []Requeued
	var first error
	for _, x := range list {
		if !opts.Since.IsZero() && x.Since.Before(opts.Since) {
			continue
		}
		r := Requeued{Was: x}
		if !opts.DryRun {
			r.Now, r.Err = c.Requeue(ctx, x.ID)
			if errors.Is(r.Err, ErrSessionNotFound) || errors.Is(r.Err, ErrSessionNotAvailable) {
				continue // no longer in failed/: requeued by another process meanwhile
			}
			if r.Err != nil && first == nil {
				first = r.Err
			}
		}
		out = append(out, r)
	}
	return out, first
}
