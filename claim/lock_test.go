package claim

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// testLocks returns locks in a fresh directory (NoSync: the tests are about
// atomicity, not durability).
func testLocks(t testing.TB) *Locks {
	t.Helper()
	l := NewLocks(filepath.Join(t.TempDir(), "locks"))
	l.NoSync = true
	return l
}

// at returns another view of the same lock directory whose clock reads now.
func at(l *Locks, now time.Time) *Locks {
	return &Locks{Dir: l.Dir, NoSync: l.NoSync, Now: func() time.Time { return now }}
}

var (
	t0        = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	elsewhere = proc.Process{Host: "elsewhere.invalid", PID: 4242, Start: 1, BootID: "b"}
)

// childProcess starts `sleep 60` and returns its identity and its killer,
// which waits for it to be reaped.
func childProcess(t *testing.T) (proc.Process, func()) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("start sleep: %v", err)
	}
	kill := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	t.Cleanup(kill)
	p, err := proc.Lookup(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return p, kill
}

func TestLockFileName(t *testing.T) {
	keys := []string{
		"owner/repo:issue-123", "/data/repos/owner/repo", "task-42", ".", "..", "../../etc/passwd",
		"a/../../b", "a\x00b", "\x00", strings.Repeat("x", 1000), strings.Repeat("/", 300), "日本語/キー",
		"A", "a", "%41", "%", "a.lock", "a.hash.lock", ".guard-01", "-", "_", " ", "\n", "\xff\xfe",
		strings.Repeat("é", 53), strings.Repeat("é", 54),
	}
	dir := t.TempDir()
	seen := map[string]string{}
	for _, key := range keys {
		name := lockFileName(key)
		if other, dup := seen[name]; dup {
			t.Errorf("keys %q and %q share file name %q", key, other, name)
		}
		seen[name] = key
		if len(name) > 200 || strings.ContainsAny(name, "/\\\x00") || strings.HasPrefix(name, ".") ||
			!strings.HasSuffix(name, lockSuffix) || filepath.Dir(filepath.Join(dir, name)) != dir {
			t.Errorf("key %q: unsafe file name %q", key, name)
		}
		if got, ok := keyFromFileName(name); ok && got != key {
			t.Errorf("key %q: name %q decodes to %q", key, name, got)
		} else if !ok && !strings.HasSuffix(name, hashedSuffix) {
			t.Errorf("key %q: name %q does not decode", key, name)
		}
	}

	// Every key round-trips through real records, and nothing leaves the
	// lock directory.
	l := testLocks(t)
	for _, key := range keys {
		if _, err := l.Lock(context.Background(), key); err != nil {
			t.Fatalf("lock %q: %v", key, err)
		}
		info, held, err := l.Check(key)
		if err != nil || !held || info.Key != key {
			t.Fatalf("Check(%q) = %q, %v, %v", key, info.Key, held, err)
		}
	}
	list, err := l.List()
	if err != nil || len(list) != len(keys) {
		t.Fatalf("List: %d locks, %v; want %d", len(list), err, len(keys))
	}
	for _, info := range list {
		if seen[filepath.Base(info.Path)] != info.Key {
			t.Errorf("listed %q at %s", info.Key, info.Path)
		}
	}
	parent, _ := os.ReadDir(filepath.Dir(l.Dir))
	if len(parent) != 1 || parent[0].Name() != "locks" {
		t.Errorf("files outside the lock directory: %v", parent)
	}
}

func TestKeyFromFileNameRejects(t *testing.T) {
	for _, name := range []string{"", ".lock", "A.lock", "%61.lock", "%4.lock", "%zz.lock", "a", "a.b.lock",
		strings.Repeat("0", 64) + hashedSuffix} {
		if key, ok := keyFromFileName(name); ok {
			t.Errorf("keyFromFileName(%q) = %q, want no key", name, key)
		}
	}
}

func TestLockInvalidKey(t *testing.T) {
	l := testLocks(t)
	for _, key := range []string{"", strings.Repeat("k", MaxLockKeyLen+1)} {
		if _, err := l.Acquire(context.Background(), key); !errors.Is(err, ErrInvalidLockKey) {
			t.Errorf("Acquire(%d-byte key) = %v, want ErrInvalidLockKey", len(key), err)
		}
		if _, _, err := l.Check(key); !errors.Is(err, ErrInvalidLockKey) {
			t.Errorf("Check(%d-byte key) = %v, want ErrInvalidLockKey", len(key), err)
		}
	}
	if _, err := l.Acquire(context.Background(), "k", WithLockOwner("no/slash")); !errors.Is(err, sessions.ErrInvalidID) {
		t.Errorf("Acquire with a bad owner = %v, want ErrInvalidID", err)
	}
}

func TestLockAcquireRelease(t *testing.T) {
	ctx := context.Background()
	l := testLocks(t)
	unlock, err := l.Acquire(ctx, "repo:issue-1", WithLockOwner("alice"))
	if err != nil {
		t.Fatal(err)
	}
	// Anyone else, the same owner included, is refused and told who holds it.
	for _, owner := range []string{"bob", "alice"} {
		_, err = l.Acquire(ctx, "repo:issue-1", WithLockOwner(owner))
		var held *LockHeldError
		if !errors.As(err, &held) || !errors.Is(err, ErrLockHeld) || errors.Is(err, ErrLockTimeout) {
			t.Fatalf("second Acquire by %s = %v, want *LockHeldError", owner, err)
		}
		if h := held.Holder; h.Owner != "alice" || h.Process.PID != os.Getpid() || h.State != LockAlive || h.Age < 0 {
			t.Fatalf("holder = %+v, want alice, this process, alive", h)
		}
		if !strings.Contains(err.Error(), "alice") {
			t.Errorf("error %q does not name the holder", err)
		}
	}
	if info, held, err := l.Check("repo:issue-1"); err != nil || !held || info.Owner != "alice" {
		t.Fatalf("Check = %+v, %v, %v", info, held, err)
	}
	if _, err := l.Release("repo:issue-1", "bob", false); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("Release by bob = %v, want ErrNotHolder", err)
	}
	if err := l.Heartbeat("repo:issue-1", "bob"); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("Heartbeat by bob = %v, want ErrNotHolder", err)
	}
	if err := l.Heartbeat("repo:issue-1", "alice"); err != nil {
		t.Fatalf("Heartbeat by alice = %v", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if err := unlock(); err != nil {
		t.Fatalf("second unlock = %v, want the first result", err)
	}
	if _, held, err := l.Check("repo:issue-1"); err != nil || held {
		t.Fatalf("after unlock: held %v, %v", held, err)
	}
	if _, err := l.Release("repo:issue-1", "alice", false); !errors.Is(err, ErrLockNotHeld) {
		t.Fatalf("Release of a free lock = %v, want ErrLockNotHeld", err)
	}
	if err := l.Heartbeat("repo:issue-1", "alice"); !errors.Is(err, ErrLockNotHeld) {
		t.Fatalf("Heartbeat of a free lock = %v, want ErrLockNotHeld", err)
	}

	// Release by owner, from "another process"; force for people.
	if _, err := l.Lock(ctx, "k", WithLockOwner("alice")); err != nil {
		t.Fatal(err)
	}
	if _, err := NewLocks(l.Dir).Release("k", "alice", false); err != nil {
		t.Fatalf("Release by owner = %v", err)
	}
	if _, err := l.Lock(ctx, "k", WithLockOwner("alice")); err != nil {
		t.Fatal(err)
	}
	info, err := l.Release("k", "bob", true)
	if err != nil || info.Owner != "alice" {
		t.Fatalf("forced Release = %+v, %v; want alice's record", info, err)
	}
}

func TestLockTakeoverOfDeadHolderIsImmediate(t *testing.T) {
	ctx := context.Background()
	l := testLocks(t)
	child, kill := childProcess(t)
	unlockChild, err := l.Acquire(ctx, "k", WithLockOwner("child"), withLockProcess(child), WithLockTTL(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "k"); !errors.Is(err, ErrLockHeld) {
		t.Fatalf("Acquire while the child lives = %v, want ErrLockHeld", err)
	}
	kill()
	if info, held, err := l.Check("k"); err != nil || held || info.State != LockDead {
		t.Fatalf("Check after the child died = %+v, %v, %v; want dead", info, held, err)
	}
	// No wait: the takeover happens in the single attempt, long before
	// the TTL.
	unlock, err := l.Acquire(ctx, "k", WithLockOwner("heir"))
	if err != nil {
		t.Fatalf("Acquire of a dead holder's lock = %v", err)
	}
	// The dead holder's unlock must not remove the heir's lock.
	if err := unlockChild(); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("stale unlock = %v, want ErrNotHolder", err)
	}
	if info, held, _ := l.Check("k"); !held || info.Owner != "heir" {
		t.Fatalf("after the stale unlock: %+v, held %v; want heir", info, held)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
}

func TestLockStaleAndHeartbeat(t *testing.T) {
	ctx := context.Background()
	l := testLocks(t)
	opts := []LockOption{WithLockOwner("remote"), withLockProcess(elsewhere), WithLockTTL(time.Minute)}
	if _, err := at(l, t0).Lock(ctx, "k", opts...); err != nil {
		t.Fatal(err)
	}
	if _, err := at(l, t0.Add(50*time.Second)).Acquire(ctx, "k"); !errors.Is(err, ErrLockHeld) {
		t.Fatalf("Acquire within the TTL = %v, want ErrLockHeld", err)
	}
	if err := at(l, t0.Add(50*time.Second)).Heartbeat("k", "remote"); err != nil {
		t.Fatal(err)
	}
	if info, held, _ := at(l, t0.Add(100*time.Second)).Check("k"); !held || info.State != LockAlive {
		t.Fatalf("after a heartbeat: %+v, held %v; want alive", info, held)
	}
	later := at(l, t0.Add(111*time.Second))
	if info, held, _ := later.Check("k"); held || info.State != LockStale {
		t.Fatalf("TTL after the heartbeat: %+v, held %v; want stale", info, held)
	}
	if _, err := later.Acquire(ctx, "k", WithLockOwner("taker")); err != nil {
		t.Fatalf("Acquire of a stale lock = %v", err)
	}
	if err := later.Heartbeat("k", "remote"); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("heartbeat after losing the lock = %v, want ErrNotHolder", err)
	}
}

func TestLockLiveLocalHolderNeverExpires(t *testing.T) {
	ctx := context.Background()
	l := testLocks(t)
	if _, err := at(l, t0).Lock(ctx, "k", WithLockTTL(time.Second)); err != nil {
		t.Fatal(err)
	}
	much := at(l, t0.Add(1000*time.Hour))
	if _, err := much.Acquire(ctx, "k"); !errors.Is(err, ErrLockHeld) {
		t.Fatalf("Acquire long after the TTL = %v, want ErrLockHeld: the holder lives", err)
	}
	for _, staleAfter := range []time.Duration{0, time.Nanosecond, -time.Hour} {
		if removed, err := much.Cleanup(staleAfter); err != nil || len(removed) != 0 {
			t.Fatalf("Cleanup(%v) = %v, %v; want nothing removed", staleAfter, removed, err)
		}
	}
}
