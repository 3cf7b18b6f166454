package sharedways

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slowPushGit is a git that, for the first push of the board branch,
// signals the test and then hangs (WORLD_MODE=after: once the push has
// landed; before: without pushing), so that the test can SIGKILL the
// pickup process that runs it at that moment. It writes "PPID PID" to
// $WORLD_MARK.
const slowPushGit = `#!/bin/bash
board=
for a in "$@"; do case $a in *:refs/heads/pickup) board=1 ;; esac; done
if [ -n "$board" ] && mkdir "$WORLD_MARK.d" 2>/dev/null; then
  if [ "$WORLD_MODE" = after ]; then "$WORLD_GIT" "$@"; fi
  echo "$PPID $$" > "$WORLD_MARK.tmp" && mv "$WORLD_MARK.tmp" "$WORLD_MARK"
  exec sleep 30
fi
exec "$WORLD_GIT" "$@"
`

// slowGitEnv installs slowPushGit and returns the environment that makes
// pickup run it, and the mark it writes.
func slowGitEnv(t *testing.T, mode string) ([]string, string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(slowPushGit), 0o755); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(dir, "mark")
	return []string{"PATH=" + dir + ":" + os.Getenv("PATH"), "WORLD_GIT=" + real, "WORLD_MODE=" + mode, "WORLD_MARK=" + mark}, mark
}

// killAtMark waits for the slow git's mark and SIGKILLs the pickup
// process that ran it (and the git).
func killAtMark(t *testing.T, mark string) int {
	t.Helper()
	var data []byte
	if !pollFor(t, func() bool {
		var err error
		data, err = os.ReadFile(mark)
		return err == nil
	}) {
		t.Fatal("no board push began")
	}
	f := strings.Fields(string(data))
	pickupPid, _ := strconv.Atoi(f[0])
	gitPid, _ := strconv.Atoi(f[1])
	if err := syscall.Kill(pickupPid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the pushing pickup (%d): %v", pickupPid, err)
	}
	_ = syscall.Kill(gitPid, syscall.SIGKILL)
	return pickupPid
}

// start runs pickup in c in the background.
func (c *clone) start(owner string, env []string, args ...string) (*exec.Cmd, *strings.Builder) {
	c.r.t.Helper()
	args = append([]string{"--owner", owner}, args...)
	cmd := exec.Command(pickupBinary(c.r.t), args...)
	cmd.Dir = c.dir
	cmd.Env = c.env(env...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		c.r.t.Fatal(err)
	}
	c.r.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, &out
}

// holdLock takes the clone's lock (as a pickup process pushing would) and
// returns its release.
func (c *clone) holdLock() func() {
	c.r.t.Helper()
	f, err := os.OpenFile(filepath.Join(c.dir, ".git", "pickup", "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		c.r.t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		c.r.t.Fatal(err)
	}
	return func() { f.Close() }
}

// keepFresh stamps the clone's last fetch (.git/pickup/fetched-at) as
// made this instant, every 50 ms until the returned stop is called, as a
// process of the clone that keeps fetching would. A claim or a transition
// trusts a fetch of its clone made less than a second ago and skips its
// own; a test that needs that path (a request that goes straight to the
// queue while the test holds the lock) gets it however slowly a busy
// machine starts the command. Truthful while nothing else moves the
// remote: the clone's view is as recent as the stamp says.
func (c *clone) keepFresh() (stop func()) {
	c.r.t.Helper()
	mark := filepath.Join(c.dir, ".git", "pickup", "fetched-at")
	done := make(chan struct{})
	stamp := func() {
		now := time.Now()
		if err := os.Chtimes(mark, now, now); err != nil {
			c.r.t.Errorf("stamp the clone's last fetch: %v", err)
		}
	}
	stamp()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
				stamp()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// queued counts the clone's queued requests.
func (c *clone) queued() int {
	entries, _ := os.ReadDir(filepath.Join(c.dir, ".git", "pickup", "queue"))
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".req") {
			n++
		}
	}
	return n
}

// TestGroupPusherKilled: three dones of one clone wait in its queue; the
// process that pushes their group commit is SIGKILLed once the push has
// landed. The remote holds all three: the two processes that live are
// told they succeeded (exit 0, not 6 "claim lost" nor 3 "already done"),
// and the clone, the remote and another clone agree.
func TestGroupPusherKilled(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a := cs[0]
	ids := a.newSessions(3)
	for i, id := range ids {
		a.must(fmt.Sprintf("o%d", i), "claim", id)
	}
	env, mark := slowGitEnv(t, "after")
	// A fetch a moment ago (kept a moment ago until they queued): the
	// dones trust it and go straight to the queue, where they wait for
	// the lock that the test holds.
	a.must("", "sync")
	fresh := a.keepFresh()
	release := a.holdLock()
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i, id := range ids {
		cmd, out := a.start(fmt.Sprintf("o%d", i), env, "done", id)
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	if !pollFor(t, func() bool { return a.queued() == 3 }) {
		t.Fatalf("%d claims queued, want 3 (each should trust the fetch made a moment before)", a.queued())
	}
	fresh()
	release()
	killed := killAtMark(t, mark)
	for i, cmd := range cmds {
		err := cmd.Wait()
		if cmd.Process.Pid == killed {
			continue
		}
		if err != nil {
			t.Errorf("done %s by o%d, whose group commit a killed process pushed: %v\n%s", ids[i], i, err, outs[i])
		}
	}
	for _, id := range ids {
		wantWhere(t, r, cs, id, "done")
	}
	if n := a.queued(); n != 0 {
		t.Errorf("%d requests left in the queue", n)
	}
}

// TestDoneKilledMidPush: a done is SIGKILLed while it pushes, before the
// remote has it: the clone says done/, the remote doing/. The clone's
// next command, whatever it is (here a list), pushes it; a retried done
// then stands (exit 0: the owner's own done is the session's last
// transition) and moves nothing; sync says in line only when it is, and
// not when a move here never reached the remote.
func TestDoneKilledMidPush(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a := cs[0]
	ids := a.newSessions(2)
	a.must("o1", "claim", ids[0])
	env, mark := slowGitEnv(t, "before")
	cmd, _ := a.start("o1", env, "done", ids[0])
	killAtMark(t, mark)
	_ = cmd.Wait()
	if got := a.localWhere(ids[0]); len(got) != 1 || got[0] != "done" {
		t.Fatalf("the killed done left %s in %v here, want done (the scenario)", ids[0], got)
	}
	if got := r.where(ids[0]); len(got) != 1 || got[0] != "doing/o1" {
		t.Fatalf("the killed done left %s in %v on the remote, want doing/o1 (the scenario)", ids[0], got)
	}
	a.must("", "list")
	if got := r.where(ids[0]); len(got) != 1 || got[0] != "done" {
		t.Fatalf("after the clone's next command the remote has %s in %v, want done", ids[0], got)
	}
	res := a.pickup(context.Background(), "o1", "done", ids[0])
	if res.code != 0 {
		t.Fatalf("retried done: exit %d, want 0 (o1's own done stands, and the remote has it so)\n%s", res.code, res.stderr)
	}
	if ops := countOps(r.branchEvents())[ids[0]]; ops["done"] != 1 {
		t.Fatalf("the board's history of %s after the retried done: %v, want one done", ids[0], ops)
	}
	wantWhere(t, r, cs, ids[0], "done")

	// A move here that no request carries (a process killed between its
	// rename and its queue entry): sync does not say "in line".
	a.must("o2", "claim", ids[1])
	from := filepath.Join(a.board(), "doing", "o2", ids[1]+".md")
	if err := os.Rename(from, filepath.Join(a.board(), "done", ids[1]+".md")); err != nil {
		t.Fatal(err)
	}
	res = a.pickup(context.Background(), "", "sync")
	if res.code == 0 || strings.Contains(res.stdout, "in line") || !strings.Contains(res.stderr, ids[1]) {
		t.Fatalf("sync while the board differs from the remote: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
