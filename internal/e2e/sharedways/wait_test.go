package sharedways

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestWaitWakesForOtherClone: next --wait in clone A wakes for a session
// made in clone B: A fetches every shared_fetch and the fetch brings the
// session into A's todo/.
func TestWaitWakesForOtherClone(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a, b := cs[0], cs[1]
	if err := os.WriteFile(a.board()+"/config.yaml", []byte("shared: origin\nshared_fetch: 300ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := make(chan result, 1)
	go func() { got <- a.pickup(ctx, "waiter", "next", "--wait=10s", "--json") }()
	time.Sleep(time.Second) // the waiter is waiting (it found nothing)
	id := b.newSessions(1)[0]
	res := <-got
	if res.code != 0 || !strings.Contains(res.stdout, id) {
		t.Fatalf("next --wait in A for a session made in B: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !r.holds("waiter", id) {
		t.Fatalf("the remote does not have %s in doing/waiter", id)
	}
}
