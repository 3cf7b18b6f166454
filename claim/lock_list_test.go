package claim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/proc"

	"github.com/pickup-dev/pickup/sessions"
)

func TestLockListAndCleanup(t *testing.T) {
	ctx := context.Background()
	l := testLocks(t)
	child, kill := childProcess(t)
	now := t0.Add(time.Hour)
	mustLock := func(when time.Time, key string, opts ...LockOption) {
		t.Helper()
		if _, err := at(l, when).Lock(ctx, key, opts...); err != nil {
			t.Fatal(err)
		}
	}
	mustLock(t0, "dead", withLockProcess(child))
	mustLock(t0, "local-old", WithLockTTL(time.Second)) // this process: alive
	mustLock(now.Add(-2*time.Minute), "remote-fresh", withLockProcess(elsewhere), WithLockTTL(5*time.Minute))
	mustLock(now.Add(-10*time.Minute), "remote-stale", withLockProcess(elsewhere), WithLockTTL(5*time.Minute))
	mustLock(now.Add(-48*time.Hour), "remote-ancient", withLockProcess(elsewhere), WithLockTTL(5*time.Minute))
	kill()
	// A record that cannot be parsed, written long ago, and a leftover
	// temporary file.
	corrupt := filepath.Join(l.Dir, lockFileName("corrupt"))
	temp := filepath.Join(l.Dir, privatePrefix+"0123456789abcdef")
	for _, p := range []string{corrupt, temp} {
		if err := os.WriteFile(p, []byte("{garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, t0.Add(-time.Minute), t0.Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
	}

	list, err := at(l, now).List()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]LockState{"corrupt": LockStale, "dead": LockDead, "local-old": LockAlive,
		"remote-ancient": LockStale, "remote-fresh": LockAlive, "remote-stale": LockStale}
	if len(list) != len(want) {
		t.Fatalf("List = %+v", list)
	}
	for _, info := range list {
		if info.State != want[info.Key] || info.Corrupt != (info.Key == "corrupt") {
			t.Errorf("%s: state %s corrupt %v, want %s", info.Key, info.State, info.Corrupt, want[info.Key])
		}
	}

	// A patient threshold spares the recently stale lock.
	removed, err := at(l, now).Cleanup(24 * time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(removed); got != "dead remote-ancient" {
		t.Fatalf("Cleanup(24h) removed %q", got)
	}
	removed, err = at(l, now).Cleanup(0)
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(removed); got != "corrupt remote-stale" {
		t.Fatalf("Cleanup(0) removed %q", got)
	}
	if _, err := os.Stat(temp); !os.IsNotExist(err) {
		t.Errorf("leftover temporary file survived: %v", err)
	}
	list, _ = at(l, now).List()
	if got := keysOf(list); got != "local-old remote-fresh" {
		t.Fatalf("left %q, want the live locks", got)
	}
	// Guards survive; nothing else is left.
	entries, _ := os.ReadDir(l.Dir)
	for _, e := range entries {
		if n := e.Name(); n[0] == '.' && len(n) > len(guardPrefix) && n[:len(guardPrefix)] != guardPrefix {
			t.Errorf("stray file %s", n)
		}
	}
}

func keysOf(infos []LockInfo) string {
	s := ""
	for i, info := range infos {
		if i > 0 {
			s += " "
		}
		s += info.Key
	}
	return s
}

func TestLockCorruptRecordIsHeldUntilItsTTL(t *testing.T) {
	l := testLocks(t)
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(l.Dir, lockFileName("k"))
	if err := os.WriteFile(path, nil, 0o644); err != nil { // as a crash of a NoSync writer may leave
		t.Fatal(err)
	}
	if err := os.Chtimes(path, t0, t0); err != nil {
		t.Fatal(err)
	}
	info, held, err := at(l, t0.Add(time.Minute)).Check("k")
	if err != nil || !held || !info.Corrupt || info.Key != "k" {
		t.Fatalf("fresh corrupt record: %+v, held %v, %v", info, held, err)
	}
	if _, err := at(l, t0.Add(DefaultLockTTL+time.Minute)).Acquire(context.Background(), "k"); err != nil {
		t.Fatalf("Acquire over an old corrupt record = %v", err)
	}
}

func TestBoardLocks(t *testing.T) {
	b, err := sessions.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := BoardLocks(b)
	if want := filepath.Join(b.Dir, ".pickup", "locks"); l.Dir != want {
		t.Fatalf("Dir = %s, want %s", l.Dir, want)
	}
	unlock, err := l.Acquire(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
}

func TestLockPrivateFiles(t *testing.T) {
	ctx := context.Background()
	l := testLocks(t)
	// Acquire and release in a loop: removed records are kept as spares
	// (at most maxSpares), reused whatever their size, and deleted by
	// Close.
	for i := range 20 {
		key := "k" + strings.Repeat("x", (i%3)*200) // records of varying length
		unlock, err := l.Acquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if info, held, err := l.Check(key); err != nil || !held || info.Corrupt {
			t.Fatalf("Check(%d) = %+v, %v, %v", i, info, held, err)
		}
		if err := unlock(); err != nil {
			t.Fatal(err)
		}
	}
	if n := countPrivate(t, l.Dir); n == 0 || n > maxSpares {
		t.Fatalf("%d private files after the loop, want 1 to %d", n, maxSpares)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := countPrivate(t, l.Dir); n != 0 {
		t.Fatalf("%d private files after Close", n)
	}

	// A Locks that only releases (a command run once) keeps nothing.
	if _, err := l.Lock(ctx, "k", WithLockOwner("alice")); err != nil {
		t.Fatal(err)
	}
	if _, err := NewLocks(l.Dir).Release("k", "alice", false); err != nil {
		t.Fatal(err)
	}
	if n := countPrivate(t, l.Dir); n != 0 {
		t.Fatalf("%d private files after a release", n)
	}

	// Cleanup deletes the private files of exited processes and old ones,
	// not those of live processes.
	child, kill := childProcess(t)
	kill()
	ns := "." + strconv.FormatUint(proc.Self().PidNS, 10)
	files := map[string]bool{ // name: should survive
		privatePrefix + strconv.Itoa(child.PID) + ns + "-0123456789abcdef":    false,
		privatePrefix + strconv.Itoa(os.Getpid()) + ns + "-0123456789abcdef":  true,
		privatePrefix + strconv.Itoa(os.Getppid()) + ns + "-0123456789abcdef": true,
		// Without its namespace a pid proves nothing: only age removes it.
		privatePrefix + strconv.Itoa(child.PID) + "-0123456789abcdef": true,
		// Numbered in another pid namespace (a sandbox): not ours to judge.
		privatePrefix + strconv.Itoa(child.PID) + ".1-0123456789abcdef": true,
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(l.Dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Cleanup(0); err != nil {
		t.Fatal(err)
	}
	for name, survive := range files {
		if _, err := os.Stat(filepath.Join(l.Dir, name)); (err == nil) != survive {
			t.Errorf("%s: exists %v, want %v", name, err == nil, survive)
		}
	}
}

func countPrivate(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), privatePrefix) {
			n++
		}
	}
	return n
}

// TestLockNoFDLeak: every path that opens a private file closes it.
func TestLockNoFDLeak(t *testing.T) {
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	ctx := context.Background()
	l := testLocks(t)
	// Descriptors open on files of the lock directory (others belong to
	// the runtime or to other tests).
	fds := func() int {
		entries, _ := os.ReadDir("/proc/self/fd")
		n := 0
		for _, e := range entries {
			if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(target, l.Dir+"/") {
				n++
			}
		}
		return n
	}
	before := fds()
	for i := range 50 {
		key := "k" + strconv.Itoa(i%3)
		unlock, err := l.Acquire(ctx, key, WithLockOwner("a"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Acquire(ctx, key); !errors.Is(err, ErrLockHeld) { // held: its file is dropped
			t.Fatal(err)
		}
		if i%5 == 0 {
			_ = l.Heartbeat(key, "a") // unlock then takes the slow path
		}
		if err := unlock(); err != nil {
			t.Fatal(err)
		}
		info, err := l.Lock(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Unlock(key, info.Token); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if after := fds(); after != before {
		t.Fatalf("%d descriptors open after the loop, %d before", after, before)
	}
	if n := countPrivate(t, l.Dir); n != 0 {
		t.Fatalf("%d private files left", n)
	}
}
