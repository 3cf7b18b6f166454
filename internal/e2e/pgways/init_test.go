package pgways

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pickup-dev/pickup/internal/arbiter/postgres/pgserver"
)

// TestInitAtOnce: eight boards run init --shared on an empty database at
// the same moment: each succeeds, the schema is made once (the advisory
// lock), and the sessions each board had before are all in it.
func TestInitAtOnce(t *testing.T) {
	db, url := newDatabase(t)
	root := t.TempDir()
	var cs []*clone
	for i := range 8 {
		c := &clone{t: t, name: fmt.Sprintf("c%d", i), dir: filepath.Join(root, fmt.Sprintf("c%d", i), "board"), home: root}
		c.must("", "init")
		c.must("", "new", "-t", "made before sharing in "+c.name)
		cs = append(cs, c)
	}
	var wg sync.WaitGroup
	results := make([]result, len(cs))
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = c.pickup(context.Background(), "", "init", "--shared", url)
		}()
	}
	wg.Wait()
	for i, res := range results {
		if res.code != 0 {
			t.Errorf("%s: init --shared: exit %d\n%s", cs[i].name, res.code, res.stderr)
		}
	}
	if got, want := server.psql(t, db, "SELECT count(*) || ' ' || max(version) FROM pickup_schema"), fmt.Sprintf("1 %d", pgserver.SchemaVersion); got != want {
		t.Errorf("pickup_schema holds %q, want one row, version %d", got, pgserver.SchemaVersion)
	}
	if got := server.psql(t, db, "SELECT count(*) FROM pickup_sessions WHERE state = 'todo'"); got != "8" {
		t.Errorf("%s sessions in the database, want the 8 the boards had", got)
	}
	cs[0].must("", "sync")
	if got := len(cs[0].files("todo")); got != 8 {
		t.Errorf("c0 shows %d sessions in todo, want 8", got)
	}
}

// TestInitNeverWritesPassword: a URL with a password works for init, but
// config.yaml (committed with the board) never holds the password; a
// config.yaml that does is refused.
func TestInitNeverWritesPassword(t *testing.T) {
	_, url := newDatabase(t)
	withPassword := strings.Replace(url, "pickup@", "pickup:s3cret@", 1)
	c := &clone{t: t, name: "c", dir: filepath.Join(t.TempDir(), "board"), home: t.TempDir()}
	res := c.pickup(context.Background(), "", "init", "--shared", withPassword)
	if res.code != 0 {
		t.Fatalf("init --shared: exit %d\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "PGPASSWORD") {
		t.Errorf("init did not say where the password goes:\n%s", res.stderr)
	}
	cfg, err := os.ReadFile(filepath.Join(c.dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), "s3cret") || !strings.Contains(string(cfg), url) {
		t.Errorf("config.yaml:\n%s\nwant %s, without the password", cfg, url)
	}
	c.must("", "new", "-t", "works without it")
	if err := os.WriteFile(filepath.Join(c.dir, "config.yaml"), []byte("shared: "+withPassword+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := c.pickup(context.Background(), "", "new", "-t", "refused"); res.code != 2 || !strings.Contains(res.stderr, "password") {
		t.Errorf("a password in config.yaml: exit %d, want 2 naming it\n%s", res.code, res.stderr)
	}
}

// TestSyncImportsHandMade: a todo/*.md written by hand on one board is not
// in the database until `pickup sync` imports it; then every board sees it
// and exactly one claims it.
func TestSyncImportsHandMade(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	a, b := cs[0], cs[1]
	const id = "2026-11-27_12-00-00-hand"
	if err := os.WriteFile(filepath.Join(a.dir, "todo", id+".md"), []byte("---\ntitle: made by hand\n---\n\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := server.psql(t, db, "SELECT count(*) FROM pickup_sessions WHERE id = '"+id+"'"); got != "0" {
		t.Fatalf("the database has the hand-made session before sync")
	}
	if out := a.must("", "sync"); !strings.Contains(out, "1 imported") {
		t.Errorf("sync did not import it:\n%s", out)
	}
	if out := b.must("bob", "claim", id); !strings.Contains(out, id) {
		t.Errorf("claim on b:\n%s", out)
	}
	if res := a.pickup(context.Background(), "al", "claim", id); res.code != 3 {
		t.Errorf("claim on a after b's: exit %d, want 3\n%s", res.code, res.stderr)
	}
	body, err := os.ReadFile(filepath.Join(b.dir, "doing", "bob", id+".md"))
	if err != nil || !strings.Contains(string(body), "made by hand") {
		t.Errorf("b's file: %q, %v", body, err)
	}
}
