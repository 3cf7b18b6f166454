package pgserver

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pickup-dev/pickup/internal/arbiter/postgres"
)

// Named locks across machines: one row of pickup_locks per held key. Each
// request is one statement (two when it must say who holds the key
// instead), so a lock is taken, taken over, renewed or released
// atomically; time is the server's now().

// lockChannel is the NOTIFY channel of released locks.
const lockChannel = "pickup_locks"

const lockColumns = `key, owner, token, process, (extract(epoch FROM ttl) * 1000)::bigint,
	(extract(epoch FROM now() - acquired_at) * 1000)::bigint,
	(extract(epoch FROM now() - heartbeat_at) * 1000)::bigint,
	now() - heartbeat_at > ttl, run, superseded`

func scanLock(r pgx.Row) (postgres.LockRow, error) {
	var x postgres.LockRow
	var process []byte
	err := r.Scan(&x.Key, &x.Owner, &x.Token, &process, &x.TTLMS, &x.HeldMS, &x.SilentMS, &x.Stale, &x.Run, &x.Superseded)
	if err == nil {
		err = json.Unmarshal(process, &x.Process)
	}
	return x, err
}

// readLock answers with key's holder (Lost), or Found false if none.
func (s *Server) readLock(ctx context.Context, key string) postgres.Response {
	x, err := scanLock(s.conn.QueryRow(ctx, `SELECT `+lockColumns+` FROM pickup_locks WHERE key = $1`, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return postgres.Response{OK: true, Lost: true}
	}
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	return postgres.Response{OK: true, Lost: true, Found: true, Lock: &x}
}

func (s *Server) lock(ctx context.Context, l *postgres.LockRequest) postgres.Response {
	process, err := json.Marshal(l.Process)
	if err != nil {
		return fail(err)
	}
	ttl := time.Duration(l.TTLMS) * time.Millisecond
	var row pgx.Row
	if l.Replace == "" {
		row = s.conn.QueryRow(ctx, `INSERT INTO pickup_locks (key, owner, token, host, process, ttl, run)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (key) DO NOTHING RETURNING `+lockColumns,
			l.Key, l.Owner, l.Token, l.Process.Host, process, ttl, l.Run)
	} else {
		row = s.conn.QueryRow(ctx, `UPDATE pickup_locks SET owner = $2, token = $3, host = $4, process = $5, ttl = $6,
			acquired_at = now(), heartbeat_at = now(), run = $9, superseded = false
			WHERE key = $1 AND token = $7 AND (NOT $8 OR now() - heartbeat_at > ttl) RETURNING `+lockColumns,
			l.Key, l.Owner, l.Token, l.Process.Host, process, ttl, l.Replace, l.ReplaceStale, l.Run)
	}
	x, err := scanLock(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return s.readLock(ctx, l.Key)
	}
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	return postgres.Response{OK: true, Lock: &x}
}

func (s *Server) unlock(ctx context.Context, l *postgres.LockRequest) postgres.Response {
	var x postgres.LockRow
	err := pgx.BeginFunc(ctx, s.conn, func(tx pgx.Tx) error {
		var err error
		x, err = scanLock(tx.QueryRow(ctx, `DELETE FROM pickup_locks WHERE key = $1 AND ($2 = '' OR token = $2) AND ($3 OR owner = $4)
			RETURNING `+lockColumns, l.Key, l.Token, l.Force, l.Owner))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, lockChannel, l.Key)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return s.readLock(ctx, l.Key)
	}
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	return postgres.Response{OK: true, Lock: &x}
}

func (s *Server) lockBeat(ctx context.Context, l *postgres.LockRequest) postgres.Response {
	x, err := scanLock(s.conn.QueryRow(ctx, `UPDATE pickup_locks SET heartbeat_at = now() WHERE key = $1 AND owner = $2 RETURNING `+lockColumns, l.Key, l.Owner))
	if errors.Is(err, pgx.ErrNoRows) {
		return s.readLock(ctx, l.Key)
	}
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	return postgres.Response{OK: true, Lock: &x}
}

func (s *Server) locks(ctx context.Context, key string) postgres.Response {
	rows, err := s.conn.Query(ctx, `SELECT `+lockColumns+` FROM pickup_locks WHERE $1 = '' OR key = $1 ORDER BY key`, key)
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (postgres.LockRow, error) { return scanLock(r) })
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	return postgres.Response{OK: true, Locks: out}
}

func (s *Server) supersede(ctx context.Context, l *postgres.LockRequest) postgres.Response {
	x, err := scanLock(s.conn.QueryRow(ctx, `UPDATE pickup_locks SET superseded = true WHERE key = $1 AND token = $2 AND run RETURNING `+lockColumns, l.Key, l.Token))
	if errors.Is(err, pgx.ErrNoRows) {
		return s.readLock(ctx, l.Key)
	}
	if err != nil {
		return fail(s.dropIfBroken(err))
	}
	return postgres.Response{OK: true, Lock: &x}
}
