package sharedways

import (
	"context"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbound"
)

// TestRemoteDown: the git daemon stops in the middle of a drain. Agents
// get exit 8 with an error naming the remote and a hint, nothing is
// moved locally or lost, and the drain resumes and completes when the
// daemon comes back.
func TestRemoteDown(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	ids := createFromAll(t, cs, 15)
	// Bounded from the drain's last claim or finish, not from its start.
	bound := testbound.New(t, 0)
	ctx := bound.Context()

	var failures atomic.Int32
	var mu sync.Mutex
	var sample string
	retry := func() bool { return true }
	var logs []*agentLog
	done := make(chan struct{})
	go func() {
		defer close(done)
		logs = drain(bound, cs, 2, retry)
	}()
	// Once a few sessions are done, stop the daemon for a while.
	for ctx.Err() == nil && countOps(r.branchEvents())[""] == nil {
		n := 0
		for _, o := range countOps(r.branchEvents()) {
			n += o["done"]
		}
		if n >= 6 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.daemon.stop()
	// While it is down: a claim fails loudly with exit 8 and moves nothing.
	before, _ := cs[0].boardFiles()
	res := cs[0].pickup(ctx, "probe", "next")
	after, _ := cs[0].boardFiles()
	if res.code == 8 {
		failures.Add(1)
		mu.Lock()
		sample = res.stderr
		mu.Unlock()
	}
	time.Sleep(1500 * time.Millisecond)
	r.daemon.start()
	<-done

	if res.code != 8 {
		t.Fatalf("next with the remote down: exit %d, want 8\n%s", res.code, res.stderr)
	}
	if !strings.Contains(sample, "origin") || !strings.Contains(sample, "pickup: hint:") || !strings.Contains(sample, "nothing was moved") {
		t.Fatalf("the error does not name the remote and the fix:\n%s", sample)
	}
	// (Other agents move sessions meanwhile: look at the probe's own.)
	for _, f := range append(before, after...) {
		if strings.Contains(f, "doing/probe/") {
			t.Fatalf("a next that failed with the remote down left %s", f)
		}
	}
	checkDrained(t, r, cs, ids, logs)
}

// TestRemoteRefusesPush: a remote whose hook refuses every push (as a
// protected branch would). The claim reaches the push and fails there:
// exit 8 naming the remote and the fix, and the local move is undone;
// a new session is not left behind either.
func TestRemoteRefusesPush(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "file")
	cs := r.clones(1)
	c := cs[0]
	id := c.newSessions(1)[0]
	hook := r.bare + "/hooks/pre-receive"
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'protected branch: no pushes' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res := c.pickup(ctx, "agent", "claim", id)
	if res.code != 8 || !strings.Contains(res.stderr, "origin") || !strings.Contains(res.stderr, "pickup: hint:") {
		t.Fatalf("claim with the push refused: exit %d, want 8 with the remote named and a hint\n%s", res.code, res.stderr)
	}
	files, _ := c.boardFiles()
	if !contains(files, "todo/"+id+".md") {
		t.Fatalf("the refused claim was not undone: %v", files)
	}
	res = c.pickup(ctx, "agent", "new", "--title", "refused", "-")
	if res.code != 8 {
		t.Fatalf("new with the push refused: exit %d, want 8\n%s", res.code, res.stderr)
	}
	after, _ := c.boardFiles()
	if len(after) != len(files) {
		t.Fatalf("the refused new left a file: %v", after)
	}
}
