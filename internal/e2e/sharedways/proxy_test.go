package sharedways

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestGitProxy: over git://, pickup's fetches and pushes go through pickup
// itself as git's core.gitProxy (a relay with TCP_NODELAY, without git's
// 40 ms stalls), and a core.gitProxy of the user's own wins over it.
func TestGitProxy(t *testing.T) {
	r := newRemote(t, "daemon")
	c := r.clones(1)[0]
	c.newSessions(2)
	trace := filepath.Join(t.TempDir(), "trace")
	res := c.pickupEnv(context.Background(), "a1", []string{"GIT_TRACE=" + trace}, "next")
	if res.code != 0 {
		t.Fatalf("next: exit %d\n%s", res.code, res.stderr)
	}
	relay := fmt.Sprintf("run_command: %s 127.0.0.1 %d", pickupBinary(t), r.daemon.port)
	data, _ := os.ReadFile(trace)
	if !strings.Contains(string(data), relay) {
		t.Fatalf("git did not connect through pickup (%q); its trace:\n%s", relay, data)
	}

	// The user's own proxy: a script that notes its use, then relays
	// through pickup (no other relay need be installed).
	used := filepath.Join(t.TempDir(), "used")
	script := filepath.Join(t.TempDir(), "my-proxy")
	body := fmt.Sprintf("#!/bin/sh\necho \"$@\" >> %s\nPICKUP_GIT_PROXY=1 exec %s \"$@\"\n", used, pickupBinary(t))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	r.git(c.dir, "config", "core.gitProxy", script)
	_ = os.Remove(trace)
	res = c.pickupEnv(context.Background(), "a1", []string{"GIT_TRACE=" + trace}, "next")
	if res.code != 0 {
		t.Fatalf("next with the user's proxy: exit %d\n%s", res.code, res.stderr)
	}
	if got, _ := os.ReadFile(used); !strings.Contains(string(got), fmt.Sprintf("127.0.0.1 %d", r.daemon.port)) {
		data, _ := os.ReadFile(trace)
		t.Fatalf("the user's core.gitProxy was not used (noted %q); git's trace:\n%s", got, data)
	}
	if data, _ := os.ReadFile(trace); strings.Contains(string(data), relay) {
		t.Fatalf("pickup's proxy ran although the user has one; git's trace:\n%s", data)
	}
}

// TestRecentFetchTrusted: a claim right after another process of the
// clone fetched runs no fetch of its own (the push settles it), but a next
// that finds nothing on that view fetches before it says so: a session
// made in another clone a moment ago is claimed, not missed.
func TestRecentFetchTrusted(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a, b := cs[0], cs[1]
	ids := a.newSessions(2)
	b.must("", "sync") // B fetches: its view is fresh now
	trace := filepath.Join(t.TempDir(), "trace")
	res := b.pickupEnv(context.Background(), "agent-b", []string{"GIT_TRACE=" + trace}, "next", "--json")
	var took struct{ ID string }
	_ = json.Unmarshal([]byte(res.stdout), &took)
	if res.code != 0 || !slices.Contains(ids, took.ID) {
		t.Fatalf("B's next: exit %d, want one of %v\n%s%s", res.code, ids, res.stdout, res.stderr)
	}
	data, _ := os.ReadFile(trace)
	if strings.Contains(string(data), " fetch ") {
		t.Fatalf("a next right after a fetch fetched again; git's trace:\n%s", data)
	}
	// B's view: nothing left to claim (A claims the other one); then A
	// makes one that is on the remote only.
	other := ids[0]
	if took.ID == other {
		other = ids[1]
	}
	a.must("agent-a", "claim", other)
	b.must("", "sync")
	// B's view stays "a moment ago" however slowly the commands start
	// (keepFresh), so B's next and claim trust it, find nothing, and must
	// answer again after a fetch of their own (claim.Client's step, which
	// the command runs through the arbiter it lent the client).
	fresh := sync.OnceFunc(b.keepFresh())
	defer fresh()
	later := firstField(a.must("", "new", "--title", "made in A", "-"))
	res = b.pickup(context.Background(), "agent-b", "next", "--json")
	if res.code != 0 || !strings.Contains(res.stdout, `"`+later+`"`) {
		t.Fatalf("B's next with %s on the remote only: exit %d\n%s%s", later, res.code, res.stdout, res.stderr)
	}
	byID := firstField(a.must("", "new", "--title", "claimed by id in B", "-"))
	res = b.pickup(context.Background(), "agent-b", "claim", "--json", byID)
	if res.code != 0 || !strings.Contains(res.stdout, `"`+byID+`"`) {
		t.Fatalf("B's claim of %s, on the remote only: exit %d\n%s%s", byID, res.code, res.stdout, res.stderr)
	}
	fresh()
}
