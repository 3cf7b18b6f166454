package pgserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// migrations are the schema's versions, in order: migration i takes the
// schema from version i to i+1. Never edit one that has shipped; add.
var migrations = []string{
	// 1: sessions, their history, and the sequences of versions and
	// fencing tokens.
	`CREATE SEQUENCE pickup_version;
	CREATE SEQUENCE pickup_fence;
	CREATE TABLE pickup_sessions (
		id text PRIMARY KEY,
		state text NOT NULL,
		owner text NOT NULL DEFAULT '',
		body bytea NOT NULL,
		version bigint NOT NULL,
		fence bigint NOT NULL DEFAULT 0,
		last_op text NOT NULL DEFAULT '',
		last_by text NOT NULL DEFAULT '',
		updated_at timestamptz NOT NULL DEFAULT now()
	);
	CREATE INDEX pickup_sessions_state ON pickup_sessions (state);
	CREATE TABLE pickup_events (
		seq bigserial PRIMARY KEY,
		tx text UNIQUE,
		at timestamptz NOT NULL DEFAULT now(),
		id text NOT NULL,
		op text NOT NULL,
		src text NOT NULL,
		dst text NOT NULL,
		owner text NOT NULL DEFAULT '',
		reason text NOT NULL DEFAULT '',
		version bigint NOT NULL,
		fence bigint NOT NULL DEFAULT 0
	);`,
	// 2: owners' heartbeats, judged on the server's clock.
	`CREATE TABLE pickup_beats (
		owner text PRIMARY KEY,
		at timestamptz NOT NULL
	);`,
	// 3: the machine each heartbeat came from (pickup status and board
	// show owners of other machines with it). IF NOT EXISTS: safe in
	// whatever place among other additions it lands.
	`ALTER TABLE pickup_beats ADD COLUMN IF NOT EXISTS host text NOT NULL DEFAULT '';`,
	// 4: the history in git. An event is pushed once a commit
	// that lists it is on the git remote's board branch; pickup_history
	// is the one row that spaces the pushes (attempt_at, on the server's
	// clock) and says what the last one did.
	`ALTER TABLE pickup_events ADD COLUMN pushed boolean NOT NULL DEFAULT false;
	CREATE INDEX pickup_events_unpushed ON pickup_events (seq) WHERE NOT pushed;
	CREATE TABLE pickup_history (
		one boolean PRIMARY KEY DEFAULT true CHECK (one),
		attempt_at timestamptz,
		pushed_at timestamptz,
		leader text NOT NULL DEFAULT '',
		tip text NOT NULL DEFAULT '',
		pushes bigint NOT NULL DEFAULT 0
	);
	INSERT INTO pickup_history DEFAULT VALUES;`,
	// 5: named locks across machines: one row per held key, its holder's
	// process (judged by its own host) and its heartbeat on the server's
	// clock (judged by every other host against ttl).
	`CREATE TABLE IF NOT EXISTS pickup_locks (
		key text PRIMARY KEY,
		owner text NOT NULL,
		token text NOT NULL,
		host text NOT NULL DEFAULT '',
		process jsonb NOT NULL,
		ttl interval NOT NULL,
		acquired_at timestamptz NOT NULL DEFAULT now(),
		heartbeat_at timestamptz NOT NULL DEFAULT now(),
		run boolean NOT NULL DEFAULT false,
		superseded boolean NOT NULL DEFAULT false
	);
	CREATE INDEX IF NOT EXISTS pickup_locks_owner ON pickup_locks (owner);`,
	// 6: the transaction that last wrote each session (txid), so that a
	// board reads only the rows changed since its last read (state with
	// Horizon) instead of every row at every command. A trigger sets it, so
	// that every writer (an older pickup, a person in psql) is seen. IF NOT
	// EXISTS and OR REPLACE: safe in whatever place among other additions
	// it lands.
	`ALTER TABLE pickup_sessions ADD COLUMN IF NOT EXISTS txid bigint NOT NULL DEFAULT 0;
	CREATE INDEX IF NOT EXISTS pickup_sessions_txid ON pickup_sessions (txid);
	CREATE OR REPLACE FUNCTION pickup_sessions_txid() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		NEW.txid := txid_current();
		RETURN NEW;
	END $$;
	DROP TRIGGER IF EXISTS pickup_sessions_txid ON pickup_sessions;
	CREATE TRIGGER pickup_sessions_txid BEFORE INSERT OR UPDATE ON pickup_sessions
		FOR EACH ROW EXECUTE FUNCTION pickup_sessions_txid();`,
	// 7: the processes of each owner's lease, per board (its id suffix),
	// so that every board of the owner's own machine judges the owner by
	// its processes (a killed agent of another clone is recovered at
	// once), not by its heartbeat. IF NOT EXISTS: safe in whatever place
	// among other additions it lands.
	`CREATE TABLE IF NOT EXISTS pickup_holders (
		owner text NOT NULL,
		board text NOT NULL,
		host text NOT NULL DEFAULT '',
		holders jsonb NOT NULL,
		at timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (owner, board)
	);`,
}

// SchemaVersion is the schema version this pickup makes and reads.
var SchemaVersion = len(migrations)

// migrateLock is the advisory lock that makes pickups that start at once
// migrate one at a time ("pickup" in ASCII).
const migrateLock = 0x7069636b7570

// ErrNewerSchema: the database was migrated by a newer pickup.
var ErrNewerSchema = errors.New("the database's pickup schema is newer than this pickup")

// newerSchema is the error of a database at version v.
func newerSchema(v int) error {
	return fmt.Errorf("%w (version %d, this pickup knows %d): upgrade pickup and pickup-postgres on this machine to the version that migrated it", ErrNewerSchema, v, SchemaVersion)
}

// migrate brings the schema to SchemaVersion. The usual case, a schema
// that is current, costs one query; otherwise it takes the advisory lock,
// reads the version again and applies what is missing in one
// transaction.
func migrate(ctx context.Context, conn *pgx.Conn) error { return MigrateTo(ctx, conn, SchemaVersion) }

// MigrateTo brings the schema to version want (at most SchemaVersion):
// migrate, and tests that make a database as an older pickup left it.
func MigrateTo(ctx context.Context, conn *pgx.Conn, want int) error {
	if want < 1 || want > SchemaVersion {
		return fmt.Errorf("migrate to schema version %d: this pickup knows 1 to %d", want, SchemaVersion)
	}
	var v int
	err := conn.QueryRow(ctx, `SELECT version FROM pickup_schema`).Scan(&v)
	switch {
	case err == nil && v == want:
		return nil
	case err == nil && v > SchemaVersion:
		return newerSchema(v)
	case err != nil && !undefinedTable(err):
		return fmt.Errorf("read schema version: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrateLock)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(migrateLock))
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS pickup_schema (version int NOT NULL)`); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `SELECT version FROM pickup_schema FOR UPDATE`).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			v = 0
			_, err = tx.Exec(ctx, `INSERT INTO pickup_schema (version) VALUES (0)`)
		}
		if err != nil {
			return err
		}
		if v > SchemaVersion {
			return newerSchema(v)
		}
		for i := v; i < want; i++ {
			if _, err := tx.Exec(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migrate to schema version %d: %w", i+1, err)
			}
		}
		_, err = tx.Exec(ctx, `UPDATE pickup_schema SET version = $1`, max(v, want))
		return err
	})
}

func undefinedTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}
