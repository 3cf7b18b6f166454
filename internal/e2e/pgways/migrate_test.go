package pgways

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pickup-dev/pickup/internal/arbiter/postgres/pgserver"
)

// TestMigrateFromVersion2: a database that a pickup of schema version 2
// made (only the first two migrations), with a session in it, is
// migrated by this pickup when a board joins it: the session is still
// there and the schema is current. A database at a version newer than
// this pickup knows is refused, naming the upgrade, and left as it is.
func TestMigrateFromVersion2(t *testing.T) {
	db, url := newDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := pgserver.MigrateTo(ctx, conn, 2); err != nil {
		t.Fatal(err)
	}
	if got := server.psql(t, db, "SELECT to_regclass('pickup_locks') IS NULL"); got != "t" {
		t.Fatalf("version 2 has pickup_locks already: the test does not start from version 2")
	}
	// A session as a pickup of version 2 put it there: its file made by
	// pickup on a local board.
	old := &clone{t: t, name: "old", dir: filepath.Join(t.TempDir(), "board"), home: t.TempDir()}
	old.must("", "init")
	id := strings.TrimSpace(old.must("", "new", "-t", "made at version 2"))
	body, err := os.ReadFile(filepath.Join(old.dir, "todo", id+".md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO pickup_sessions (id, state, body, version, last_op) VALUES ($1, 'todo', $2, nextval('pickup_version'), 'new')`, id, body); err != nil {
		t.Fatal(err)
	}

	c := clones(t, url, 1)[0] // init --shared: migrates
	if got, want := server.psql(t, db, "SELECT version FROM pickup_schema"), strconv.Itoa(pgserver.SchemaVersion); got != want {
		t.Errorf("schema version after the join: %s, want %s", got, want)
	}
	if got := c.files("todo"); len(got) != 1 || got[0] != id {
		t.Errorf("the board shows todo %v, want the session of version 2, %s", got, id)
	}
	if out := c.must("", "show", id); !strings.Contains(out, "made at version 2") {
		t.Errorf("show %s after the migration:\n%s", id, out)
	}
	c.must("ana", "lock", "acquire", "repo:main") // a table of the new version
	c.must("ana", "claim", id)

	// A newer pickup migrated it since: this one refuses, naming the
	// upgrade, and changes nothing.
	newer := pgserver.SchemaVersion + 1
	server.psql(t, db, "UPDATE pickup_schema SET version = "+strconv.Itoa(newer))
	other := &clone{t: t, name: "late", dir: filepath.Join(t.TempDir(), "board"), home: t.TempDir()}
	res := other.pickup(context.Background(), "", "init", "--shared", url)
	if res.code == 0 || !strings.Contains(res.stderr, "newer than this pickup") || !strings.Contains(res.stderr, "upgrade pickup") {
		t.Errorf("init --shared on a database of a newer schema: exit %d, want a refusal naming the upgrade\n%s", res.code, res.stderr)
	}
	if got := server.psql(t, db, "SELECT version FROM pickup_schema"); got != strconv.Itoa(newer) {
		t.Errorf("the refused pickup changed the schema version to %s", got)
	}
	if got := server.psql(t, db, "SELECT state || '/' || owner FROM pickup_sessions WHERE id = '"+id+"'"); got != "doing/ana" {
		t.Errorf("the session is %s in the database, want doing/ana", got)
	}
}
