package pgserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pickup-dev/pickup/internal/arbiter/postgres"
)

// move makes one transition, in one transaction: the session's row moves
// only if it is where the transition found it (the compare-and-swap), and
// the transition is appended to pickup_events under the caller's Tx name.
// A statement that the connection lost before sending it did not happen,
// and is tried once more on a new connection (a pooled connection that a
// restart or pg_terminate_backend closed); one lost after it may have
// reached the server is read back (readBack).
func (s *Server) move(ctx context.Context, m *postgres.Move) postgres.Response {
	for try := 0; ; try++ {
		if err := s.connect(ctx); err != nil {
			return fail(err)
		}
		res, committing, err := s.moveOnce(ctx, m)
		if err == nil {
			return res
		}
		if !broken(err) {
			return fail(&failure{kind: postgres.KindError, err: err})
		}
		s.close()
		if committing {
			return s.readBack(m, err)
		}
		if try == 1 {
			return fail(&failure{kind: postgres.KindUnreachable, err: err})
		}
	}
}

// moveSQL is a transition in one statement, and so in one transaction
// and one round trip: the compare-and-swap on the session's row ($1 id, $2
// and $3 its new place, $4 its content, $5 whether it is a claim, $6 and
// $7 where the transition found it), the event row ($8 op, $9 who, $10 the
// transaction's name, $11 reason), the owner's heartbeat ($14 the
// machine it came from) and, for a session arriving in todo,
// the NOTIFY that wakes next --wait everywhere (delivered at the commit),
// and the processes of the owner's lease on this board ($15 the board,
// $16 the processes as JSON, NULL for none known: see pickup_holders).
const moveSQL = `WITH m AS (
	UPDATE pickup_sessions SET state = $2, owner = $3, body = $4,
		version = nextval('pickup_version'),
		fence = CASE WHEN $5 THEN nextval('pickup_fence') ELSE fence END,
		last_op = $8, last_by = $9, updated_at = now()
	WHERE id = $1 AND state = $6 AND owner = $7
	RETURNING version, fence
` + afterTransition + `
)
SELECT version, fence, (SELECT count(*) FROM n) FROM m`

// newSQL is moveSQL for a new session: the insert is the compare-and-swap
// (an id that exists is a conflict). $6 and $7, empty, only name their
// type.
const newSQL = `WITH m AS (
	INSERT INTO pickup_sessions (id, state, owner, body, version, fence, last_op, last_by)
	VALUES ($1, $2, $3, $4, nextval('pickup_version'), CASE WHEN $5 THEN nextval('pickup_fence') ELSE 0 END, $8, $9)
	ON CONFLICT (id) DO NOTHING
	RETURNING version, fence
` + afterTransition + ` AND $6::text = '' AND $7::text = ''
)
SELECT version, fence, (SELECT count(*) FROM n) FROM m`

// afterTransition is what moveSQL and newSQL do once m made the
// transition: the event row, the owner's heartbeat and lease processes,
// and the NOTIFY of a session arriving in todo (its WHERE left open).
const afterTransition = `), e AS (
	INSERT INTO pickup_events (tx, id, op, src, dst, owner, reason, version, fence)
	SELECT $10, $1, $8, $12, $13, $9, $11, version, fence FROM m
), b AS (
	INSERT INTO pickup_beats (owner, at, host) SELECT $9, now(), $14 FROM m WHERE $9 <> '' AND $8 <> 'reap'
	ON CONFLICT (owner) DO UPDATE SET at = now(), host = CASE WHEN $14 = '' THEN pickup_beats.host ELSE $14 END
), hl AS (
	INSERT INTO pickup_holders (owner, board, host, holders) SELECT $9, $15, $14, $16::jsonb FROM m
	WHERE $16::jsonb IS NOT NULL AND $9 <> '' AND $8 <> 'reap'
	ON CONFLICT (owner, board) DO UPDATE SET holders = EXCLUDED.holders, host = EXCLUDED.host, at = now()
), n AS (
	SELECT pg_notify('` + notifyChannel + `', $1) FROM m WHERE $2 = 'todo'`

// moveOnce is one attempt of move; committing reports that err came after
// the statement may have reached the server (its outcome is unknown).
func (s *Server) moveOnce(ctx context.Context, m *postgres.Move) (res postgres.Response, committing bool, err error) {
	row := postgres.Row{ID: m.ID, State: m.ToState, Owner: m.ToOwner}
	sql := moveSQL
	if m.FromState == "" {
		sql = newSQL
	}
	var notified int64
	err = s.conn.QueryRow(ctx, sql, m.ID, m.ToState, m.ToOwner, m.Body, m.ToState == "doing", m.FromState, m.FromOwner,
		m.Op, m.Owner, m.Tx, m.Reason, place(m.FromState, m.FromOwner), place(m.ToState, m.ToOwner), m.Host,
		m.Board, holdersParam(m.Holders)).Scan(&row.Version, &row.Fence, &notified)
	if errors.Is(err, pgx.ErrNoRows) {
		if m.Again {
			// An earlier attempt whose answer was lost may have
			// committed: its event row says so (the name is unique).
			err := s.conn.QueryRow(ctx, `SELECT version, fence FROM pickup_events WHERE tx = $1`, m.Tx).Scan(&row.Version, &row.Fence)
			if err == nil {
				return postgres.Response{OK: true, Row: &row, ReadBack: true}, false, nil
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return res, false, err
			}
		}
		cur, found, rerr := s.current(ctx, m.ID)
		if rerr != nil {
			return res, false, rerr
		}
		res = postgres.Response{Lost: true, Found: found}
		if found {
			res.Row = &cur
		}
		return res, false, nil
	}
	if err != nil {
		return res, !pgconn.SafeToRetry(err), err
	}
	return postgres.Response{OK: true, Row: &row}, false, nil
}

// current reads where the database has session id.
func (s *Server) current(ctx context.Context, id string) (postgres.Row, bool, error) {
	r := postgres.Row{ID: id}
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
func (s *Server) readBack(m *postgres.Move, cause error) postgres.Response {
	deadline := time.Now().Add(ReadBackFor)
	var last error = cause
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), ConnectTimeout)
		err := s.connect(ctx)
		if err == nil {
			row := postgres.Row{ID: m.ID, State: m.ToState, Owner: m.ToOwner}
			err = s.conn.QueryRow(ctx, `SELECT version, fence FROM pickup_events WHERE tx = $1`, m.Tx).Scan(&row.Version, &row.Fence)
			cancel()
			switch {
			case err == nil:
				return postgres.Response{OK: true, Row: &row, ReadBack: true}
			case errors.Is(err, pgx.ErrNoRows):
				return postgres.Response{Kind: postgres.KindUnreachable, ReadBack: true,
					Err: fmt.Sprintf("the connection was lost during the commit, which did not happen (read back): %v", cause)}
			}
			s.dropIfBroken(err)
		} else {
			cancel()
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	return postgres.Response{Kind: postgres.KindUnknown,
		Err: fmt.Sprintf("the connection was lost during the commit, and its outcome could not be read back within %v: %v", ReadBackFor, last)}
}

// holdersParam is a lease's processes as a jsonb parameter: NULL for
// none known (the row of pickup_holders stays as it is).
func holdersParam(h json.RawMessage) *string {
	if len(h) == 0 {
		return nil
	}
	v := string(h)
	return &v
}
