package pgways

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestWaitWokenByNotify: next --wait on one board takes a session made on
// another board, woken by the database's NOTIFY: the fallback poll is set
// longer than the wait, so only the NOTIFY can wake it in time.
func TestWaitWokenByNotify(t *testing.T) {
	_, url := newDatabase(t)
	cs := clones(t, url, 2)
	a, b := cs[0], cs[1]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := make(chan result, 1)
	go func() {
		got <- a.pickupEnv(ctx, "waiter", []string{"PICKUP_PG_POLL=10m"}, "next", "--wait", "20s", "--json")
	}()
	time.Sleep(2 * time.Second) // the waiter listens
	id := strings.TrimSpace(b.must("", "new", "-t", "from b"))
	res := <-got
	if res.code != 0 || !strings.Contains(res.stdout, id) {
		t.Fatalf("next --wait in a: exit %d, want 0 and %s\n%s%s", res.code, id, res.stdout, res.stderr)
	}
}
