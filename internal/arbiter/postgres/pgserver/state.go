package pgserver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pickup-dev/pickup/internal/arbiter/postgres"
)

// The reads of the board (each command's state: the sessions written
// since its board last looked, with the owners' heartbeats), the
// heartbeat, and the import of a joining board's sessions.

// beat records owner's heartbeat, at the server's clock, from host, and
// renews the named locks the owner holds (one statement, one round trip):
// they live as long as it does.
func (s *Server) beat(ctx context.Context, owner, host, board string, holders json.RawMessage) postgres.Response {
	if _, err := s.conn.Exec(ctx, `WITH b AS (INSERT INTO pickup_beats (owner, at, host) VALUES ($1, now(), $2)
		ON CONFLICT (owner) DO UPDATE SET at = now(), host = CASE WHEN $2 = '' THEN pickup_beats.host ELSE $2 END
		), hl AS (INSERT INTO pickup_holders (owner, board, host, holders) SELECT $1, $3, $2, $4::jsonb WHERE $4::jsonb IS NOT NULL
		ON CONFLICT (owner, board) DO UPDATE SET holders = EXCLUDED.holders, host = EXCLUDED.host, at = now())
		UPDATE pickup_locks SET heartbeat_at = now() WHERE owner = $1`, owner, host, board, holdersParam(holders)); err != nil {
		return fail(s.dropIfBroken(err))
	}
	return postgres.Response{OK: true}
}

// beats reads every owner's heartbeat, as its age on the server's clock.
const beatsSQL = `SELECT owner, host, at, extract(epoch FROM now() - at) FROM pickup_beats`

// holdersSQL reads the lease processes that boards of machine $1 recorded
// for owners who hold sessions: a board of that machine judges them by
// process.
const holdersSQL = `SELECT owner, board, holders FROM pickup_holders
WHERE host = $1 AND owner IN (SELECT DISTINCT owner FROM pickup_sessions WHERE state = 'doing')`

func collectHolders(rows pgx.Rows) ([]postgres.OwnerHolders, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (postgres.OwnerHolders, error) {
		var h postgres.OwnerHolders
		var raw []byte
		err := r.Scan(&h.Owner, &h.Board, &raw)
		h.Holders = raw
		return h, err
	})
}

func collectBeats(rows pgx.Rows) ([]postgres.Beat, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (postgres.Beat, error) {
		var b postgres.Beat
		var at time.Time
		var age float64
		err := r.Scan(&b.Owner, &b.Host, &at, &age)
		b.At = at.UTC().Format(time.RFC3339Nano)
		b.AgeMS = int64(age * 1000)
		return b, err
	})
}

// stateSQL reads the sessions written by transactions from $1 on (0:
// every session) and, in the same statement and so the same snapshot, the
// oldest transaction still running: every transaction before it is
// committed or gone, so every row changed after this read is written by a
// transaction from it on, and the next read asks from it (Through). A
// board with no session gives one row of NULLs besides the horizon. $2:
// with each session's content.
const stateSQL = `WITH h AS (SELECT txid_snapshot_xmin(txid_current_snapshot()) AS through)
SELECT h.through, p.id, p.state, p.owner, p.version, p.fence, p.last_op, p.last_by, p.txid,
	CASE WHEN $2 THEN p.body END
FROM h LEFT JOIN pickup_sessions p ON p.txid >= $1`

// state reads the sessions written since the horizon since (see
// stateSQL), with their content if bodies and since > 0 (a read from
// the start gives many rows, few of them new to the board).
//
// The sessions and the heartbeats are read in one batch: one round trip
// to the server, not two, for every command.
func (s *Server) state(ctx context.Context, since int64, bodies bool, host string) postgres.Response {
	batch := &pgx.Batch{}
	batch.Queue(stateSQL, since, bodies && since > 0)
	batch.Queue(beatsSQL)
	if host != "" {
		batch.Queue(holdersSQL, host)
	}
	br := s.conn.SendBatch(ctx, batch)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	var through int64
	var out []postgres.Row
	for rows.Next() {
		var id, state, owner, lastOp, lastBy *string
		var version, fence, txid *int64
		var body []byte
		if err := rows.Scan(&through, &id, &state, &owner, &version, &fence, &lastOp, &lastBy, &txid, &body); err != nil {
			rows.Close()
			return fail(s.dropIfBroken(err))
		}
		if id == nil {
			continue // no session changed
		}
		out = append(out, postgres.Row{ID: *id, State: *state, Owner: *owner, Version: *version, Fence: *fence,
			LastOp: *lastOp, LastBy: *lastBy, Txid: *txid, Body: body})
	}
	if err := rows.Err(); err != nil {
		return fail(s.dropIfBroken(err))
	}
	brows, err := br.Query()
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	beats, err := collectBeats(brows)
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	var holders []postgres.OwnerHolders
	if host != "" {
		hrows, err := br.Query()
		if err != nil {
			return fail(s.dropIfBroken(err))
		}
		if holders, err = collectHolders(hrows); err != nil {
			return fail(s.dropIfBroken(err))
		}
	}
	if err := br.Close(); err != nil {
		return fail(s.dropIfBroken(err))
	}
	return postgres.Response{OK: true, Rows: out, Beats: beats, Holders: holders, Through: through}
}

func (s *Server) bodies(ctx context.Context, ids []string) postgres.Response {
	rows, err := s.conn.Query(ctx, `SELECT id, state, owner, version, fence, last_op, last_by, body FROM pickup_sessions WHERE id = ANY($1)`, ids)
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (postgres.Row, error) {
		var x postgres.Row
		err := r.Scan(&x.ID, &x.State, &x.Owner, &x.Version, &x.Fence, &x.LastOp, &x.LastBy, &x.Body)
		return x, err
	})
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	return postgres.Response{OK: true, Rows: out}
}

// importRows inserts the sessions whose ids the database does not have
// (a board that joins: its sessions made before it was shared), in one
// transaction.
func (s *Server) importRows(ctx context.Context, in []postgres.Row) postgres.Response {
	n := 0
	var conflicts []string
	err := pgx.BeginFunc(ctx, s.conn, func(tx pgx.Tx) error {
		n, conflicts = 0, nil
		for _, r := range in {
			tag, err := tx.Exec(ctx, `INSERT INTO pickup_sessions (id, state, owner, body, version, last_op) VALUES ($1, $2, $3, $4, nextval('pickup_version'), 'import') ON CONFLICT (id) DO NOTHING`,
				r.ID, r.State, r.Owner, r.Body)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				// Another board's session has this id: the same one
				// (imported twice) or a different one (ids made apart
				// before sharing), which the caller renames.
				var same bool
				if err := tx.QueryRow(ctx, `SELECT body = $2 FROM pickup_sessions WHERE id = $1`, r.ID, r.Body).Scan(&same); err != nil {
					return err
				}
				if !same {
					conflicts = append(conflicts, r.ID)
				}
			}
			if tag.RowsAffected() == 1 {
				n++
				if _, err := tx.Exec(ctx, `INSERT INTO pickup_events (id, op, src, dst, version) VALUES ($1, 'import', '', $2, currval('pickup_version'))`, r.ID, place(r.State, r.Owner)); err != nil {
					return err
				}
			}
		}
		if n > 0 {
			_, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, notifyChannel)
			return err
		}
		return nil
	})
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	return postgres.Response{OK: true, Count: n, IDs: conflicts}
}

// place is a session's place as the event log names it.
func place(state, owner string) string {
	if state == "doing" && owner != "" {
		return "doing/" + owner
	}
	return state
}
