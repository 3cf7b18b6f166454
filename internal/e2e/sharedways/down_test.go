package sharedways

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbound"
)

// TestRemoteDown: the git daemon stops for a moment (1.5 s) in the middle
// of a drain. The agents' commands ride over it (a refused connection is
// tried again until network_timeout, 30 s by default): only a call in
// flight when the daemon was killed may answer exit 8, and the drain
// completes with nothing lost. Then, the daemon down for good, a command
// gets exit 8 at its deadline with an error naming the remote and a
// hint, and moves nothing.
func TestRemoteDown(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	ids := createFromAll(t, cs, 15)
	// Bounded from the drain's last claim or finish, not from its start.
	bound := testbound.New(t, 0)
	ctx := bound.Context()

	var agentFailures atomic.Int32
	retry := func() bool { agentFailures.Add(1); return true }
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
	time.Sleep(1500 * time.Millisecond)
	r.daemon.start()
	<-done
	checkDrained(t, r, cs, ids, logs)
	// Each agent has one call at a time: only those in flight at the kill
	// can have lost their connection midway (not ridden over: a push may
	// have landed). Every call that met the refusals waited instead.
	t.Logf("agents' exit-8 answers while the daemon was down for 1.5s: %d", agentFailures.Load())
	if n, agents := agentFailures.Load(), int32(len(cs)*2); n > agents {
		t.Errorf("%d exit-8 answers from %d agents: the refused connections were not ridden over", n, agents)
	}

	// Down for longer than a command's deadline: exit 8, nothing moved.
	id := cs[0].newSessions(1)[0]
	r.daemon.stop()
	before, _ := cs[0].boardFiles()
	res := cs[0].pickupEnv(context.Background(), "probe", []string{"PICKUP_NETWORK_TIMEOUT=1s"}, "claim", id)
	after, _ := cs[0].boardFiles()
	r.daemon.start()
	if res.code != 8 {
		t.Fatalf("claim with the remote down: exit %d, want 8\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "origin") || !strings.Contains(res.stderr, "pickup: hint:") || !strings.Contains(res.stderr, "nothing was moved") {
		t.Fatalf("the error does not name the remote and the fix:\n%s", res.stderr)
	}
	if !slices.Equal(before, after) {
		t.Fatalf("a claim that failed with the remote down moved files:\nbefore %v\nafter  %v", before, after)
	}
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
