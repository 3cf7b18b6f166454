package pgways

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pickup-dev/pickup/internal/testbound"
)

// boardPlaces walks the clone's board (todo/, doing/*/, done/, failed/)
// and returns every place of every session: "todo", "doing/w", "done",
// "failed".
func (c *clone) boardPlaces() map[string][]string {
	out := map[string][]string{}
	add := func(place string) {
		for _, id := range c.files(place) {
			out[id] = append(out[id], place)
		}
	}
	add("todo")
	owners, _ := os.ReadDir(filepath.Join(c.dir, "doing"))
	for _, o := range owners {
		if o.IsDir() {
			add("doing/" + o.Name())
		}
	}
	add("done")
	add("failed")
	for _, ps := range out {
		sort.Strings(ps)
	}
	return out
}

// dbPlaces is where the database has every session.
func dbPlaces(t *testing.T, db string) map[string]string {
	out := map[string]string{}
	rows := server.psql(t, db, "SELECT id, state, owner FROM pickup_sessions")
	for _, line := range strings.Split(rows, "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			continue
		}
		p := f[1]
		if p == "doing" && f[2] != "" {
			p += "/" + f[2]
		}
		out[f[0]] = p
	}
	return out
}

// checkOnePlace asserts that after pickup sync every clone shows every
// session in exactly one place, the database's.
func checkOnePlace(t *testing.T, db string, cs []*clone) bool {
	t.Helper()
	want := dbPlaces(t, db)
	ok := true
	for _, c := range cs {
		c.must("", "sync")
		got := c.boardPlaces()
		for id, p := range want {
			if len(got[id]) != 1 || got[id][0] != p {
				t.Errorf("%s shows %s in %v; the database has it in %s", c.name, id, got[id], p)
				ok = false
			}
		}
		for id, ps := range got {
			if _, known := want[id]; !known {
				t.Errorf("%s shows %s in %v; the database does not have it", c.name, id, ps)
				ok = false
			}
		}
	}
	return ok
}

// TestMirrorOnePlaceUnderLosses: 2 boards × an agent script of 4
// subshells each drain a few sessions at a time, round after round, so
// that most claims are lost to the other board while every command
// refreshes its board first: a claim that loses must put the session
// where the database has it now, never by an answer older than what
// another process of its board already shows. After each round every
// session is in exactly one place on every board, the database's.
// PGWAYS_MIRROR_ROUNDS sets the number of rounds (default 6, scaled by
// PICKUP_TEST_SCALE),
// PGWAYS_MIRROR_JOBS the subshells per board (default 4),
// PGWAYS_MIRROR_SESSIONS the sessions per round (3), PGWAYS_MIRROR_BOARDS
// the boards (2).
func TestMirrorOnePlaceUnderLosses(t *testing.T) {
	rounds := testbound.Scaled(t, 6, 2)
	if n, err := strconv.Atoi(os.Getenv("PGWAYS_MIRROR_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	jobs := 4
	if n, err := strconv.Atoi(os.Getenv("PGWAYS_MIRROR_JOBS")); err == nil && n > 0 {
		jobs = n
	}
	perRound := 3
	if n, err := strconv.Atoi(os.Getenv("PGWAYS_MIRROR_SESSIONS")); err == nil && n > 0 {
		perRound = n
	}
	boards := 2
	if n, err := strconv.Atoi(os.Getenv("PGWAYS_MIRROR_BOARDS")); err == nil && n > 0 {
		boards = n
	}
	db, url := newDatabase(t)
	cs := clones(t, url, boards)
	ctx := context.Background() // startAgents bounds the drain from its last claim
	for round := range rounds {
		ids := createFromAll(t, cs, perRound)
		d := startAgents(t, ctx, cs, jobs)
		// Refreshers beside the agents: each of their Refreshes can meet
		// a claim of this board in flight.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					c.pickup(d.bound.Context(), "", "sync")
				}
			}()
		}
		d.wait()
		close(stop)
		wg.Wait()
		if !checkOnePlace(t, db, cs) {
			t.Fatalf("round %d (sessions %v): a board shows a session elsewhere than the database, or in two places", round, ids)
		}
		if t.Failed() {
			return
		}
	}
}

// TestSyncSetsAsideSecondCopy: a board left with a session both in done/
// and in another board's owner's doing/ (what the lost-claim race left
// before it was fixed, and what a hand or a restore can leave) is healed by
// pickup sync: the database's place is kept, the other copy goes to
// conflicts/, and pickup doctor then finds nothing to say.
func TestSyncSetsAsideSecondCopy(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	id := strings.TrimSpace(cs[0].must("", "new", "-t", "twice"))
	cs[0].must("c0-w2", "claim", id)
	cs[0].must("c0-w2", "done", id)
	c1 := cs[1]
	c1.must("", "sync")
	stray := filepath.Join(c1.dir, "doing", "c0-w2", id+".md")
	data, err := os.ReadFile(filepath.Join(c1.dir, "done", id+".md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(stray), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stray, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if !checkOnePlace(t, db, cs) {
		return
	}
	aside, _ := filepath.Glob(filepath.Join(c1.dir, "conflicts", id+"*"))
	if len(aside) != 1 {
		t.Errorf("conflicts/ holds %v, want the second copy", aside)
	}
	if res := c1.pickup(context.Background(), "", "doctor"); res.code != 0 {
		t.Errorf("doctor after sync: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
