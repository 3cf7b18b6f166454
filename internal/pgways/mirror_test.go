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
	"time"
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
// PGWAYS_MIRROR_ROUNDS sets the number of rounds (default 6),
// PGWAYS_MIRROR_JOBS the subshells per board (default 4),
// PGWAYS_MIRROR_SESSIONS the sessions per round (3), PGWAYS_MIRROR_BOARDS
// the boards (2).
func TestMirrorOnePlaceUnderLosses(t *testing.T) {
	rounds := 6
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
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
					c.pickup(ctx, "", "sync")
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
