package pgways

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSixteenRacers: 16 processes in 4 boards claim one session at once:
// one wins, 15 exit 3, and the database and every board agree on the
// winner. Several rounds, so that the boards' claims meet at the
// database (within one board the rename settles them first).
func TestSixteenRacers(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 4)
	for round := range 6 {
		id := strings.TrimSpace(cs[round%4].must("", "new", "-t", fmt.Sprintf("the one of round %d", round)))
		for _, c := range cs {
			c.must("", "sync") // every board shows it in todo/ before the race
		}
		race(t, db, cs, id, round)
	}
}

func race(t *testing.T, db string, cs []*clone, id string, round int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	results := make([]result, 16)
	owners := make([]string, 16)
	start := make(chan struct{})
	for i := range 16 {
		c := cs[i%4]
		owners[i] = fmt.Sprintf("%s-r%d-%d", c.name, round, i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = c.pickup(ctx, owners[i], "claim", id)
		}()
	}
	close(start)
	wg.Wait()
	var winners []string
	for i, res := range results {
		switch res.code {
		case 0:
			winners = append(winners, owners[i])
		case 3:
		default:
			t.Errorf("round %d: %s: exit %d, want 0 or 3\n%s", round, owners[i], res.code, res.stderr)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("round %d: winners %v, want exactly one", round, winners)
	}
	if got := server.psql(t, db, "SELECT state || '/' || owner FROM pickup_sessions WHERE id = '"+id+"'"); got != "doing/"+winners[0] {
		t.Errorf("round %d: the database has %q, want doing/%s", round, got, winners[0])
	}
	if got := server.psql(t, db, "SELECT count(*) FROM pickup_events WHERE op = 'claim' AND id = '"+id+"'"); got != "1" {
		t.Errorf("round %d: %s claims in the database's history, want 1", round, got)
	}
	for _, c := range cs {
		c.must("", "sync")
		var holders []string
		for _, r := range owners {
			if slices.Contains(c.files("doing/"+r), id) {
				holders = append(holders, r)
			}
		}
		if len(holders) != 1 || holders[0] != winners[0] || len(c.files("todo")) != 0 {
			t.Errorf("round %d: %s shows %s held by %v (todo %v), want %s only", round, c.name, id, holders, c.files("todo"), winners[0])
		}
	}
}

// TestReapedOwnerFenced: a session claimed on one machine (a, the far
// host: its processes cannot be seen here), reaped on another (b) and
// claimed there: its first owner's late done is refused with exit 6,
// changes nothing, and the fencing token has grown. On one host the claim
// would stay (its claimer's parent, this test, is alive: conclusive
// evidence that outranks the claim's age).
func TestReapedOwnerFenced(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	a, b := cs[0], cs[1]
	id := strings.TrimSpace(a.must("", "new", "-t", "fenced"))
	if res := farPickup(t, a, "a1", "claim", id); res.code != 0 {
		t.Fatalf("a1's claim on the far host: exit %d\n%s", res.code, res.stderr)
	}
	first := server.psql(t, db, "SELECT fence FROM pickup_sessions WHERE id = '"+id+"'")
	// b sees a1's claim, which then goes without a heartbeat for longer
	// than the stale period given to reap (liveness across hosts judges
	// a1 by the claim's age in b).
	b.must("", "sync")
	time.Sleep(1100 * time.Millisecond)
	if out := b.must("", "reap", "--stale", "1s"); !strings.Contains(out, id) {
		t.Fatalf("reap in b did not reap %s:\n%s", id, out)
	}
	b.must("b1", "claim", id)
	second := server.psql(t, db, "SELECT fence FROM pickup_sessions WHERE id = '"+id+"'")
	if f1, _ := strconv.Atoi(first); mustAtoi(t, second) <= f1 {
		t.Errorf("fencing token went from %s to %s, want it to grow", first, second)
	}
	res := farPickup(t, a, "a1", "done", id)
	if res.code != 6 {
		t.Fatalf("a1's late done: exit %d, want 6\n%s%s", res.code, res.stdout, res.stderr)
	}
	if got := server.psql(t, db, "SELECT state || '/' || owner FROM pickup_sessions WHERE id = '"+id+"'"); got != "doing/b1" {
		t.Errorf("after the refused done the database has %q, want doing/b1", got)
	}
	if got := server.psql(t, db, "SELECT count(*) FROM pickup_events WHERE op = 'done'"); got != "0" {
		t.Errorf("%s done events, want none", got)
	}
	if len(a.files("done")) != 0 || len(a.files("doing/a1")) != 0 || !slices.Contains(a.files("doing/b1"), id) {
		t.Errorf("a's board after the refused done: done %v, doing/a1 %v, doing/b1 %v", a.files("done"), a.files("doing/a1"), a.files("doing/b1"))
	}
	b.must("b1", "done", id)
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

// TestLateDoneRacesReap: an owner finishes its sessions while another
// machine reaps them, at the same moment: for each session exactly one of
// the two stands (the database's history has a done or a reap, never
// both), a refused done exits 6, and the boards agree.
func TestLateDoneRacesReap(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	a, b := cs[0], cs[1]
	const n = 8
	var ids []string
	for i := range n {
		id := strings.TrimSpace(a.must("", "new", "-t", fmt.Sprintf("s%d", i)))
		a.must("a1", "claim", id)
		ids = append(ids, id)
	}
	b.must("", "sync")
	time.Sleep(1100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	codes := make([]int, n)
	start := make(chan struct{})
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res := a.pickup(ctx, "a1", "done", id)
			codes[i] = res.code
			if res.code != 0 && res.code != 6 {
				t.Errorf("done %s: exit %d, want 0 or 6\n%s", id, res.code, res.stderr)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		if res := b.pickup(ctx, "", "reap", "--stale", "1s"); res.code != 0 {
			t.Errorf("reap: exit %d\n%s", res.code, res.stderr)
		}
	}()
	close(start)
	wg.Wait()
	done, reaped := 0, 0
	for i, id := range ids {
		ops := server.psql(t, db, "SELECT string_agg(op, ',' ORDER BY seq) FROM pickup_events WHERE id = '"+id+"'")
		switch ops {
		case "new,claim,done":
			done++
			if codes[i] != 0 {
				t.Errorf("%s: done stands in the database, but it exited %d", id, codes[i])
			}
		case "new,claim,reap":
			reaped++
			if codes[i] != 6 {
				t.Errorf("%s: reaped in the database, but the late done exited %d, want 6", id, codes[i])
			}
		default:
			t.Errorf("%s's history in the database: %s, want a done or a reap after the claim, not both", id, ops)
		}
	}
	t.Logf("%d done, %d reaped", done, reaped)
	a.must("", "sync")
	b.must("", "sync")
	for _, c := range cs {
		if got := len(c.files("done")) + len(c.files("todo")); got != n {
			t.Errorf("%s shows %d sessions in done/ and todo/, want %d", c.name, got, n)
		}
	}
}
