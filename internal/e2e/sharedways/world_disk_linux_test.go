package sharedways

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pickup-dev/pickup/internal/testbin"
	"github.com/pickup-dev/pickup/internal/testbound"
)

// smallDisk mounts a tmpfs of size (e.g. "16m") for the test, or skips
// the test, saying why, where that is not allowed (CI runs as root).
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs and fill it (CI runs as root)")
	}
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size="+size+",mode=0755"); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Skipf("root, but not allowed to mount a tmpfs (a container without CAP_SYS_ADMIN?): %v", err)
		}
		t.Fatalf("mount a tmpfs on %s: %v", mnt, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	return mnt
}

// fill writes path until its filesystem has no byte left, and returns
// how much it wrote.
func fill(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int64
	for _, size := range []int{1 << 20, 64 << 10, 4 << 10, 1} {
		chunk := bytes.Repeat([]byte{'x'}, size)
		for {
			k, err := f.Write(chunk)
			n += int64(k)
			if err != nil {
				if !errors.Is(err, unix.ENOSPC) {
					t.Fatalf("fill %s: %v", path, err)
				}
				break
			}
		}
	}
	return n
}

// clonesOn makes n clones of r under dir (a small disk), the first
// creating the board branch, the others joining it.
func (r *remote) clonesOn(dir string, n int) []*clone {
	r.t.Helper()
	// Runs before the remote's folder is removed and dir unmounted: a
	// clone's detached processes (the queue's pusher, heartbeats) work in
	// the clone and write to the remote and to $HOME, both in its folder.
	r.t.Cleanup(func() { testbin.WaitDetached(dir) })
	var out []*clone
	for i := range n {
		c := &clone{r: r, name: fmt.Sprintf("c%d", i), dir: filepath.Join(dir, fmt.Sprintf("c%d", i))}
		r.git(dir, "clone", "-q", r.url, c.dir)
		if res := c.pickup(context.Background(), "", "init", "--shared"); res.code != 0 {
			r.t.Fatalf("init --shared in %s: exit %d\n%s", c.name, res.code, res.stderr)
		}
		out = append(out, c)
	}
	return out
}

// TestWorldFullDiskClaim is the sequence: a clone on a 16 MB
// tmpfs; the clone's lock is held, a claim starts and queues behind it,
// the disk fills, the lock is released. The claim must end (it used to
// spin for ever at 80% CPU) with exit 1 and a full-disk message naming a
// path (not the network hint), and leave the clone and the remote
// agreeing; once space is freed the same claim succeeds.
func TestWorldFullDiskClaim(t *testing.T) {
	t.Parallel()
	mnt := smallDisk(t, "16m")
	r := newRemote(t, "daemon")
	c := r.clonesOn(mnt, 1)[0]
	id := c.newSessions(1)[0]
	gitDir := filepath.Join(c.dir, ".git")

	// A fetch a moment ago, kept so until the claim queued: the claim
	// trusts it and goes straight to the queue.
	fresh := c.keepFresh()
	// The clone's lock, held as another pickup process holds it.
	fd, err := unix.Open(filepath.Join(gitDir, "pickup", "lock"), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// One claim: testbound.Idle is room for it on any machine, and a
	// claim that spins on the full disk never ends.
	ctx, cancel := context.WithTimeout(context.Background(), testbound.Idle)
	defer cancel()
	type ran struct {
		res  result
		took time.Duration
	}
	done := make(chan ran, 1)
	go func() {
		start := time.Now()
		res := c.pickupEnv(ctx, "A", []string{"PICKUP_NETWORK_TIMEOUT=5s"}, "claim", id)
		done <- ran{res, time.Since(start)}
	}()
	// Let it move the session here and queue its request.
	if !waitFor(ctx, func() bool {
		entries, _ := os.ReadDir(filepath.Join(gitDir, "pickup", "queue"))
		return len(entries) > 0
	}) {
		t.Fatal("the claim never queued its request")
	}
	fresh()
	filler := filepath.Join(mnt, "filler")
	fill(t, filler)
	unix.Close(fd) // releases the lock
	got := <-done
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	t.Logf("claim on a full disk: exit %d after %s\n%s", got.res.code, got.took.Round(time.Millisecond), got.res.stderr)
	if got.res.code == -1 {
		t.Fatalf("the claim did not end within %s on a full disk (it spins): %s", testbound.Idle, got.res.stderr)
	}
	if got.res.code != 1 || !strings.Contains(got.res.stderr, "disk is full") || !strings.Contains(got.res.stderr, "free space") ||
		!strings.Contains(got.res.stderr, mnt) || strings.Contains(got.res.stderr, "credentials") {
		t.Errorf("claim on a full disk: exit %d, want 1 with a full-disk message naming the path and saying to free space (and no network hint):\n%s", got.res.code, got.res.stderr)
	}
	local, remote := sessionPlaces(r, c, id)
	if len(local) != 1 || len(remote) != 1 || local[0] != remote[0] || local[0] != "todo/"+id+".md" {
		t.Errorf("after the failed claim the clone has %s in %v and the remote in %v; want both todo/", id, local, remote)
	}
	// Space again: the same command works.
	if res := c.pickup(context.Background(), "A", "claim", id); res.code != 0 {
		t.Fatalf("claim once space is freed: exit %d\n%s", res.code, res.stderr)
	}
	if !r.holds("A", id) {
		t.Fatalf("the remote does not have %s in doing/A after the claim: %v", id, r.branchFiles())
	}
}

// TestWorldFullDiskDrain: two clones on one 16 MB tmpfs, each drained by
// a bash agent script with two subshells, against a git daemon whose
// disk is not full. Mid-drain the tmpfs is filled for a few seconds, then
// freed. The agents retry exit 1 (the full-disk hint says to) and 8. No
// call hangs, the calls that met the full disk say so, and every session
// is claimed once, finished once, in done/ on the remote and alike in
// every clone.
func TestWorldFullDiskDrain(t *testing.T) {
	t.Parallel()
	// A call is stopped at hard (12 times the network deadline: room for
	// a slow machine; a call that spins on the full disk spins for ever).
	const hard = time.Minute
	mnt := smallDisk(t, "16m")
	r := newRemote(t, "daemon")
	cs := r.clonesOn(mnt, 2)
	ids := createFromAll(t, cs, 6)
	// The drain (not the setup before it) is bounded from its last claim
	// or finish, not from its start: it runs as slowly as the machine does.
	bound := testbound.New(t, 0)
	ctx := bound.Context()
	w := startAgentsRetrying(ctx, t, r, cs, 2, hard, "1 8", "PICKUP_NETWORK_TIMEOUT=5s")
	w.observe(bound)
	if !waitFor(ctx, func() bool { return doneOnRemote(r) >= 2 }) {
		t.Fatalf("the drain did not start: %v\n%s", bound.Err(), w.stderr())
	}
	filler := filepath.Join(mnt, "filler")
	fullFrom := time.Now()
	fill(t, filler)
	// Full for 3 s at least, and until a call met it (exit 1): on a busy
	// machine 3 s can pass without any.
	time.Sleep(3 * time.Second)
	if !waitFor(ctx, func() bool { return w.exited(1) > 0 }) {
		t.Errorf("no call met the full disk: %v", bound.Err())
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	fullFor := time.Since(fullFrom)
	logs, calls := w.wait()
	n, hung, _, longest := callStats(calls)
	full := 0
	for _, c := range calls {
		if c.code == 1 {
			full++
		}
	}
	stderr := w.stderr()
	t.Logf("%d pickup calls, %d hung (killed at %s), %d exited 1 while the disk was full for %s; longest call: %v",
		n, hung, hard, full, fullFor.Round(time.Millisecond), longest)
	if hung > 0 {
		t.Errorf("%d pickup calls hung past %s\n%s", hung, hard, stderr)
	}
	if full == 0 {
		t.Errorf("no call met the full disk: the scenario did not happen\n%s", stderr)
	}
	if strings.Contains(stderr, "credentials") {
		t.Errorf("a full disk was reported with the network hint:\n%s", stderr)
	}
	checkDrained(t, r, cs, ids, logs)
	if t.Failed() || os.Getenv("SHAREDWAYS_VERBOSE") != "" {
		t.Logf("the agents' stderr:\n%s", stderr)
	}
}
