package pgserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pickup-dev/pickup/internal/pgboard"
)

// move makes one transition, in one transaction: the session's row moves
// only if it is where the transition found it (the compare-and-swap), and
// the transition is appended to pickup_events under the caller's Tx name.
// A transaction that the connection lost before its COMMIT was sent did
// not happen, and is tried once more on a new connection; one lost while
// its COMMIT was under way is read back (readBack).
func (s *Server) move(ctx context.Context, m *pgboard.Move) pgboard.Response {
	for try := 0; ; try++ {
		if err := s.connect(ctx); err != nil {
			return fail(err)
		}
		res, committing, err := s.moveOnce(ctx, m)
		if err == nil {
			return res
		}
		if !broken(err) {
			return fail(&failure{kind: pgboard.KindError, err: err})
		}
		s.close()
		if committing {
			return s.readBack(m, err)
		}
		if try == 1 {
			return fail(&failure{kind: pgboard.KindUnreachable, err: err})
		}
	}
}

// moveOnce is one attempt of move; committing reports that err came while
// the COMMIT was under way (its outcome is unknown).
func (s *Server) moveOnce(ctx context.Context, m *pgboard.Move) (res pgboard.Response, committing bool, err error) {
	tx, err := s.conn.Begin(ctx)
	if err != nil {
		return res, false, err
	}
	defer func() {
		if err != nil && !committing {
			rctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = tx.Rollback(rctx)
			cancel()
		}
	}()
	row := pgboard.Row{ID: m.ID, State: m.ToState, Owner: m.ToOwner}
	claim := m.ToState == "doing"
	if m.FromState == "" {
		err = tx.QueryRow(ctx, `INSERT INTO pickup_sessions (id, state, owner, body, version, fence, last_op, last_by)
			VALUES ($1, $2, $3, $4, nextval('pickup_version'), CASE WHEN $5 THEN nextval('pickup_fence') ELSE 0 END, $6, $7)
			ON CONFLICT (id) DO NOTHING RETURNING version, fence`,
			m.ID, m.ToState, m.ToOwner, m.Body, claim, m.Op, m.Owner).Scan(&row.Version, &row.Fence)
	} else {
		err = tx.QueryRow(ctx, `UPDATE pickup_sessions SET state = $2, owner = $3, body = $4,
			version = nextval('pickup_version'),
			fence = CASE WHEN $5 THEN nextval('pickup_fence') ELSE fence END,
			last_op = $8, last_by = $9, updated_at = now()
			WHERE id = $1 AND state = $6 AND owner = $7 RETURNING version, fence`,
			m.ID, m.ToState, m.ToOwner, m.Body, claim, m.FromState, m.FromOwner, m.Op, m.Owner).Scan(&row.Version, &row.Fence)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		_ = tx.Rollback(ctx)
		cur, found, rerr := s.current(ctx, m.ID)
		if rerr != nil {
			return res, false, rerr
		}
		res = pgboard.Response{Lost: true, Found: found}
		if found {
			res.Row = &cur
		}
		return res, false, nil
	}
	if err != nil {
		return res, false, err
	}
	if _, err = tx.Exec(ctx, `INSERT INTO pickup_events (tx, id, op, src, dst, owner, reason, version, fence)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		m.Tx, m.ID, m.Op, place(m.FromState, m.FromOwner), place(m.ToState, m.ToOwner), m.Owner, m.Reason, row.Version, row.Fence); err != nil {
		return res, false, err
	}
	if m.ToState == "todo" {
		// Delivered at the commit: next --wait on every board wakes.
		if _, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, m.ID); err != nil {
			return res, false, err
		}
	}
	if err = tx.Commit(ctx); err != nil {
		return res, true, err
	}
	return pgboard.Response{OK: true, Row: &row}, false, nil
}

// current reads where the database has session id.
func (s *Server) current(ctx context.Context, id string) (pgboard.Row, bool, error) {
	r := pgboard.Row{ID: id}
	err := s.conn.QueryRow(ctx, `SELECT state, owner, version, fence, last_op, last_by, body FROM pickup_sessions WHERE id = $1`, id).
		Scan(&r.State, &r.Owner, &r.Version, &r.Fence, &r.LastOp, &r.LastBy, &r.Body)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, err
}

// readBack finds out whether the transaction m.Tx committed, connecting
// again for up to ReadBackFor while the server comes back: its event row
// exists exactly when it did.
func (s *Server) readBack(m *pgboard.Move, cause error) pgboard.Response {
	deadline := time.Now().Add(ReadBackFor)
	var last error = cause
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), ConnectTimeout)
		err := s.connect(ctx)
		if err == nil {
			row := pgboard.Row{ID: m.ID, State: m.ToState, Owner: m.ToOwner}
			err = s.conn.QueryRow(ctx, `SELECT version, fence FROM pickup_events WHERE tx = $1`, m.Tx).Scan(&row.Version, &row.Fence)
			cancel()
			switch {
			case err == nil:
				return pgboard.Response{OK: true, Row: &row, ReadBack: true}
			case errors.Is(err, pgx.ErrNoRows):
				return pgboard.Response{Kind: pgboard.KindUnreachable, ReadBack: true,
					Err: fmt.Sprintf("the connection was lost during the commit, which did not happen (read back): %v", cause)}
			}
			s.dropIfBroken(err)
		} else {
			cancel()
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	return pgboard.Response{Kind: pgboard.KindUnknown,
		Err: fmt.Sprintf("the connection was lost during the commit, and its outcome could not be read back within %v: %v", ReadBackFor, last)}
}
