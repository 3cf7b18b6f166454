package pgways

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSixteenRacers: 16 processes in 4 boards claim one session at once:
// one wins, 15 exit 3, and the database and every board agree on the
// winner.
func TestSixteenRacers(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 4)
	id := strings.TrimSpace(cs[0].must("", "new", "-t", "the one"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	results := make([]result, 16)
	owners := make([]string, 16)
	start := make(chan struct{})
	for i := range 16 {
		c := cs[i%4]
		owners[i] = fmt.Sprintf("%s-r%d", c.name, i)
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
			t.Errorf("%s: exit %d, want 0 or 3\n%s", owners[i], res.code, res.stderr)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("winners %v, want exactly one", winners)
	}
	if got := server.psql(t, db, "SELECT state || '/' || owner FROM pickup_sessions WHERE id = '"+id+"'"); got != "doing/"+winners[0] {
		t.Errorf("the database has %q, want doing/%s", got, winners[0])
	}
	if got := server.psql(t, db, "SELECT count(*) FROM pickup_events WHERE op = 'claim'"); got != "1" {
		t.Errorf("%s claims in the database's history, want 1", got)
	}
	for _, c := range cs {
		c.must("", "sync")
		owner := strings.SplitN(winners[0], "-", 2)[0]
		_ = owner
		var holders []string
		for _, r := range owners {
			if slices.Contains(c.files("doing/"+r), id) {
				holders = append(holders, r)
			}
		}
		if len(holders) != 1 || holders[0] != winners[0] || len(c.files("todo")) != 0 {
			t.Errorf("%s shows %s held by %v (todo %v), want %s only", c.name, id, holders, c.files("todo"), winners[0])
		}
	}
}

// TestReapedOwnerFenced: a session reaped on another machine and claimed
// there: its first owner's late done is refused with exit 6, changes
// nothing, and the fencing token has grown.
func TestReapedOwnerFenced(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	a, b := cs[0], cs[1]
	id := strings.TrimSpace(a.must("", "new", "-t", "fenced"))
	a.must("a1", "claim", id)
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
	if second <= first && len(second) <= len(first) {
		t.Errorf("fencing token went from %s to %s, want it to grow", first, second)
	}
	res := a.pickup(context.Background(), "a1", "done", id)
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
