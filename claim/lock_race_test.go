package claim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestLockStaleTakeoverRace: of 16 processes (separate Locks on one
// directory) that find the same stale lock, exactly one takes it over.
func TestLockStaleTakeoverRace(t *testing.T) {
	ctx := context.Background()
	for round := range 20 {
		l := testLocks(t)
		if _, err := at(l, t0).Lock(ctx, "k", WithLockOwner("gone"), withLockProcess(elsewhere), WithLockTTL(time.Minute)); err != nil {
			t.Fatal(err)
		}
		const n = 16
		var wg sync.WaitGroup
		start := make(chan struct{})
		results := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := at(l, t0.Add(time.Hour)).Lock(ctx, "k", WithLockOwner(fmt.Sprintf("taker-%d", i)))
				results <- err
			}()
		}
		close(start)
		wg.Wait()
		close(results)
		winners := 0
		for err := range results {
			switch {
			case err == nil:
				winners++
			case errors.Is(err, ErrLockHeld):
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d winners, want 1", round, winners)
		}
		if info, held, _ := l.Check("k"); !held || info.Owner == "gone" {
			t.Fatalf("round %d: lock is %+v", round, info)
		}
	}
}

// increment adds one to the number in path, non-atomically: only the lock
// makes it safe.
func increment(path string) error {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	n := 0
	if len(b) > 0 {
		if n, err = strconv.Atoi(string(b)); err != nil {
			return err
		}
	}
	return os.WriteFile(path, []byte(strconv.Itoa(n+1)), 0o644)
}

func countUnderLock(dir, counter string, times int) error {
	l := &Locks{Dir: dir, NoSync: true} // a view of its own, as another process would have
	defer l.Close()
	for range times {
		unlock, err := l.Acquire(context.Background(), "counter", WithLockWait(-1), WithLockBackoff(time.Millisecond, 20*time.Millisecond))
		if err != nil {
			return err
		}
		if err := increment(counter); err != nil {
			return err
		}
		if err := unlock(); err != nil {
			return err
		}
	}
	return nil
}

func readCounter(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLockCounter(t *testing.T) {
	l := testLocks(t)
	counter := filepath.Join(t.TempDir(), "counter")
	const workers, times = 8, 50
	errs := make(chan error, workers)
	for range workers {
		go func() { errs <- countUnderLock(l.Dir, counter, times) }()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := readCounter(t, counter); n != workers*times {
		t.Fatalf("counter = %d, want %d", n, workers*times)
	}
	if list, _ := l.List(); len(list) != 0 {
		t.Fatalf("locks left: %+v", list)
	}
}

// TestLockCounterProcesses runs the counter in real processes (this test
// binary, re-executed).
func TestLockCounterProcesses(t *testing.T) {
	if dir := os.Getenv("PICKUP_LOCK_HELPER_DIR"); dir != "" {
		times, err := strconv.Atoi(os.Getenv("PICKUP_LOCK_HELPER_TIMES"))
		if err != nil {
			times = 50
		}
		if err := countUnderLock(dir, os.Getenv("PICKUP_LOCK_HELPER_COUNTER"), times); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	l := testLocks(t)
	counter := filepath.Join(t.TempDir(), "counter")
	const procs = 4
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLockCounterProcesses$")
		cmd.Env = append(os.Environ(), "PICKUP_LOCK_HELPER_DIR="+l.Dir, "PICKUP_LOCK_HELPER_COUNTER="+counter)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	if n := readCounter(t, counter); n != procs*50 {
		t.Fatalf("counter = %d, want %d", n, procs*50)
	}
}

func TestLockWaitTimeout(t *testing.T) {
	ctx := context.Background()
	l := testLocks(t)
	if _, err := l.Lock(ctx, "k", WithLockOwner("alice")); err != nil {
		t.Fatal(err)
	}
	_, err := l.Acquire(ctx, "k", WithLockWait(30*time.Millisecond))
	var le *LockError
	if !errors.Is(err, ErrLockTimeout) || errors.Is(err, ErrLockHeld) || !errors.As(err, &le) || le.Holder == nil || le.Holder.Owner != "alice" {
		t.Fatalf("Acquire with a wait = %v, want ErrLockTimeout naming alice", err)
	}
}

func TestLockWaitGetsReleasedLock(t *testing.T) {
	ctx := context.Background()
	l := testLocks(t)
	unlock, err := l.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := l.Lock(ctx, "k", WithLockWait(-1), WithLockOwner("waiter"), WithLockBackoff(time.Millisecond, 5*time.Millisecond))
		got <- err
	}()
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
}

func TestLockContextCancel(t *testing.T) {
	l := testLocks(t)
	if _, err := l.Lock(context.Background(), "k"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := l.Acquire(ctx, "k", WithLockWait(-1))
		got <- err
	}()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) || errors.Is(err, ErrLockTimeout) {
		t.Fatalf("Acquire with a cancelled context = %v, want context.Canceled", err)
	}
	// A cancelled context takes nothing, even a free lock.
	if _, err := l.Acquire(ctx, "free"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire(free) with a cancelled context = %v", err)
	}
	if _, held, _ := l.Check("free"); held {
		t.Fatal("a cancelled Acquire took the lock")
	}
}

// BenchmarkLockAcquireRelease: uncontended acquire + release through the
// library, fsync off (NoSync) and on (the default: each record is fsynced
// before it is published). Their ratio to what the filesystem allows is
// scripts/bench's lock-lib row, which measures the floor in the same run.
func BenchmarkLockAcquireRelease(b *testing.B) {
	for _, c := range []struct {
		name   string
		noSync bool
	}{{"fsync=off", true}, {"fsync=on", false}} {
		b.Run(c.name, func(b *testing.B) {
			l := testLocks(b)
			l.NoSync = c.noSync
			defer l.Close()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				unlock, err := l.Acquire(ctx, "owner/repo:issue-123")
				if err != nil {
					b.Fatal(err)
				}
				if err := unlock(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
