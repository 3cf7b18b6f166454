package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter/retry"
)

// Riding over a restart. A PostgreSQL server restarts, or fails over, in
// seconds, and a daemon may be killed; every request of this board goes
// through call, which tries a transient failure again, with backoff and
// jitter, until the board's network deadline (Options.NetworkTimeout,
// config.yaml's network_timeout), and only then fails with ErrDatabase
// (exit 8). It is the one place this is done: no command retries on its
// own.
//
// Transient is what did not happen: the helper reports KindUnreachable
// (a connection refused, reset or closed, SQLSTATE 57P01/57P02/57P03 or
// class 08, "server refused TLS connection": nothing was committed, or a
// commit read back as not done), or the conversation with the helper
// broke (a daemon killed: it is dialed again). Never retried: an answer
// (KindError: permissions, a schema newer than this pickup, a password
// refused), and a commit whose outcome is not known (KindUnknown): it
// may stand.
//
// A transition is sent again with the same transaction name and Again
// set: if an earlier attempt did commit after all (its answer lost with
// a killed daemon), the compare-and-swap finds the session moved and the
// helper finds the event row under that name, and answers that the
// transition stands; the name is unique in pickup_events, so a
// transition never commits twice.

// DefaultNetworkTimeout is how long a board's requests ride over a
// database that does not answer when no deadline is given (gitx's
// default for a git remote, the same setting).
const DefaultNetworkTimeout = 30 * time.Second

// minTry: the least a try is given, however little of the deadline is
// left.
const minTry = time.Second

// retryable ops: reads, writes that are idempotent (a heartbeat, an
// import that inserts what is missing, a lock's heartbeat or
// supersession), transitions (idempotent by their name, above) and lock
// requests (the lock's token names the acquisition: see LockArbiter).
// Not the history pusher's turn, whose advisory lock lives on one
// connection and is lost with it: the pusher fails, and the next batch
// goes on.
var retryable = map[string]bool{
	"open": true, "state": true, "bodies": true, "import": true, "beat": true, "move": true,
	"lock": true, "unlock": true, "lockbeat": true, "locks": true, "supersede": true,
	"history_info": true,
}

// retryPolicy is how call retries (internal/arbiter/retry, with the
// board's deadline); its zero value is the defaults.
type retryPolicy struct {
	deadline time.Duration // 0: DefaultNetworkTimeout; < 0: never retry
	now      func() time.Time
	sleep    func(context.Context, time.Duration) error
}

func (p retryPolicy) limit() time.Duration {
	if p.deadline == 0 {
		return DefaultNetworkTimeout
	}
	return max(p.deadline, 0)
}

func (p retryPolicy) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// transient reports whether err is a failure that did not happen in the
// database (see above), and whether the helper itself went away.
func transient(err error, ch *channel) (again, redial bool) {
	var de *DatabaseError
	if !errors.As(err, &de) || de.Unknown {
		return false, false
	}
	if ch != nil && ch.transportFailed() {
		return true, true
	}
	return de.transient, false
}

// call sends one request, riding over transient failures until the
// deadline (retry.Policy.Do). The answer of a request that was retried
// has Retried set.
func (s *Board) call(op string, req Request) (Response, error) {
	start := s.retry.clock()
	var res Response
	var ch *channel
	redial := false
	p := retry.Policy{
		Budget: s.retry.limit(),
		Now:    s.retry.now,
		Sleep:  s.retry.sleep,
		Transient: func(err error) bool {
			again, broken := transient(err, ch)
			redial = broken
			return again && retryable[req.Op]
		},
	}
	err := p.Do(context.Background(), func(n int) error {
		if n > 1 {
			if req.Move != nil {
				// Sent again under its name: an earlier try that did
				// commit is found, not made twice.
				m := *req.Move
				m.Again = true
				req.Move = &m
			}
			if redial {
				if rerr := s.redial(ch); rerr != nil && !isTransient(rerr) {
					res = Response{}
					return rerr
				}
			}
		}
		if req.Op != "wait" {
			req.DeadlineMS = max((s.retry.limit() - s.retry.clock().Sub(start)).Milliseconds(), minTry.Milliseconds())
		}
		ch = s.channel()
		var err error
		res, err = ch.call(op, req)
		if err == nil {
			res.Retried = n > 1
		}
		return err
	})
	var gave *retry.GaveUpError
	if errors.As(err, &gave) {
		// The database's own error, with how long it was ridden over
		// (exit 8 names the deadline the user can raise).
		var de *DatabaseError
		if errors.As(gave.Err, &de) {
			de.Err = fmt.Errorf("%w (gave up after %d tries in %s: network_timeout %s)", de.Err, gave.Tries, gave.Spent.Round(time.Millisecond), gave.Budget)
		}
		err = gave.Err
	}
	return res, err
}

func isTransient(err error) bool {
	again, _ := transient(err, nil)
	return again
}

// channel is the board's current channel.
func (s *Board) channel() *channel {
	s.chMu.Lock()
	defer s.chMu.Unlock()
	return s.ch
}

// redial replaces the broken channel old with a new one (a daemon that
// was killed: dialing starts another) that has opened the database. A
// channel that another goroutine replaced already is kept.
func (s *Board) redial(old *channel) error {
	s.chMu.Lock()
	defer s.chMu.Unlock()
	if s.ch != old {
		return nil
	}
	ch, err := dial(s.helper, s.url)
	if err != nil {
		return &DatabaseError{URL: s.URL, Op: "connect", Err: err, transient: true}
	}
	if _, err := ch.call("connect", Request{Op: "open", URL: s.url}); err != nil && !isTransient(err) {
		ch.close()
		return err
	}
	old.close()
	s.ch = ch
	return nil
}
