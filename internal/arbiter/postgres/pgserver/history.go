package pgserver

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pickup-dev/pickup/internal/arbiter/postgres"
)

// The database's side of the history in git (see pgboard's history.go):
// which process pushes, when, and what it has not pushed yet. Git itself
// runs in pickup; the helper never needs it.

// historyLock is the advisory lock that the one history pusher holds on
// its connection ("pkhist" in ASCII). A session-level lock goes with the
// connection: a pusher that dies (its helper's input closed, its daemon
// client gone, its backend terminated) lets the next one go at once.
const historyLock = 0x706b68697374

// historyDueSQL takes the turn to push when the last attempt is older
// than the interval ($1, seconds) and an event waits: one conditional
// UPDATE on the server's clock, so of all the commands that find it due
// at once exactly one is told so.
const historyDueSQL = `UPDATE pickup_history SET attempt_at = now(), leader = $2
WHERE (attempt_at IS NULL OR attempt_at <= now() - make_interval(secs => $1))
AND EXISTS (SELECT 1 FROM pickup_events WHERE NOT pushed)
RETURNING true`

// historyDue reports whether a push is due, taking the turn if so. A
// failure is no answer ("not due"): it must never fail the command that
// asked in passing.
func (s *Server) historyDue(ctx context.Context, every time.Duration, leader string) bool {
	var due bool
	err := s.conn.QueryRow(ctx, historyDueSQL, every.Seconds(), leader).Scan(&due)
	if errors.Is(err, pgx.ErrNoRows) {
		return false // not due, or another command took the turn
	}
	if err != nil {
		s.dropIfBroken(err)
		return false
	}
	return due
}

// historyBegin makes this connection the one pusher, if no other is.
func (s *Server) historyBegin(ctx context.Context, req *postgres.Request) postgres.Response {
	if !s.historyHeld {
		var got bool
		if err := s.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(historyLock)).Scan(&got); err != nil {
			return fail(s.dropIfBroken(err))
		}
		if !got {
			return postgres.Response{OK: true, Busy: true}
		}
		s.historyHeld = true
	}
	if req.Force {
		if _, err := s.conn.Exec(ctx, `UPDATE pickup_history SET attempt_at = now(), leader = $1`, req.Owner); err != nil {
			return fail(s.dropIfBroken(err))
		}
		return postgres.Response{OK: true, HistoryDue: true}
	}
	due := s.historyDue(ctx, time.Duration(req.HistoryEveryMS)*time.Millisecond, req.Owner)
	return postgres.Response{OK: true, HistoryDue: due}
}

// historyEnd lets another pusher go.
func (s *Server) historyEnd(ctx context.Context) postgres.Response {
	if s.historyHeld && s.conn != nil && !s.conn.IsClosed() {
		if _, err := s.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, int64(historyLock)); err != nil {
			return fail(s.dropIfBroken(err))
		}
	}
	s.historyHeld = false
	return postgres.Response{OK: true}
}

// historyBatch reads the events not yet pushed, in order, and every
// session with its content, in one snapshot: the commit's tree is then
// the board exactly as those events left it.
func (s *Server) historyBatch(ctx context.Context) postgres.Response {
	var res postgres.Response
	err := pgx.BeginTxFunc(ctx, s.conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT seq, at, id, op, src, dst, owner, reason FROM pickup_events WHERE NOT pushed ORDER BY seq`)
		if err != nil {
			return err
		}
		res.Events, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (postgres.Event, error) {
			var e postgres.Event
			var at time.Time
			err := r.Scan(&e.Seq, &at, &e.ID, &e.Op, &e.Src, &e.Dst, &e.Owner, &e.Reason)
			e.At = at.UTC().Format(time.RFC3339Nano)
			return e, err
		})
		if err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT id, state, owner, version, body FROM pickup_sessions`)
		if err != nil {
			return err
		}
		res.Rows, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (postgres.Row, error) {
			var x postgres.Row
			err := r.Scan(&x.ID, &x.State, &x.Owner, &x.Version, &x.Body)
			return x, err
		})
		return err
	})
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	res.OK = true
	return res
}

// historyMark records that the events Seqs are on the branch; pushed: a
// push of this caller's put them there, at tip. Rewound: the branch lost
// the commits after After's, at Tip now: the events after After are
// marked not pushed (they go in the next batch again), in the same
// transaction.
func (s *Server) historyMark(ctx context.Context, req *postgres.Request) postgres.Response {
	var n, again int
	err := pgx.BeginFunc(ctx, s.conn, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE pickup_events SET pushed = true WHERE seq = ANY($1) AND NOT pushed`, req.Seqs)
		if err != nil {
			return err
		}
		n = int(tag.RowsAffected())
		if req.Rewound {
			tag, err := tx.Exec(ctx, `UPDATE pickup_events SET pushed = false WHERE seq > $1 AND pushed`, req.After)
			if err != nil {
				return err
			}
			again = int(tag.RowsAffected())
			if _, err := tx.Exec(ctx, `UPDATE pickup_history SET tip = $1`, req.Tip); err != nil {
				return err
			}
		}
		if req.Pushed {
			_, err = tx.Exec(ctx, `UPDATE pickup_history SET pushed_at = now(), tip = $1, pushes = pushes + 1`, req.Tip)
		}
		return err
	})
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	return postgres.Response{OK: true, Count: n, Repushed: again}
}

// historyInfo says how the history stands.
func (s *Server) historyInfo(ctx context.Context) postgres.Response {
	var h postgres.HistoryInfo
	var attempt, pushed *time.Time
	var ago *float64
	err := s.conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM pickup_events WHERE NOT pushed), attempt_at, pushed_at,
		extract(epoch FROM now() - pushed_at), leader, tip, pushes FROM pickup_history`).
		Scan(&h.Pending, &attempt, &pushed, &ago, &h.Leader, &h.Tip, &h.Pushes)
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	if attempt != nil {
		h.AttemptAt = attempt.UTC().Format(time.RFC3339)
	}
	if pushed != nil {
		h.PushedAt = pushed.UTC().Format(time.RFC3339)
	}
	if ago != nil {
		h.PushedAgo = int64(*ago * 1000)
	}
	return postgres.Response{OK: true, History: &h}
}
