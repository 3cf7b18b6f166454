package claim

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLockTakeoverWindow: two takers find the same stale lock. The first
// has judged it stale and is about to remove it when the second one
// arrives: the second must wait on the key's guard until the first has
// removed the stale record, then race it to publish; exactly one wins.
// Without the guard the second would take the stale lock in that window,
// and the first would then remove the second's fresh lock and publish its
// own: two holders.
//
// TestLockStaleTakeoverRace races 16 takers and catches a missing guard
// only when the scheduler happens to interleave them; here the second taker
// is started inside the window (the takeover hook), and the window stays
// open until the second is seen blocked on the guard in /proc/locks, or
// has finished (which is the bug).
func TestLockTakeoverWindow(t *testing.T) {
	ctx := context.Background()
	l := testLocks(t)
	if _, err := at(l, t0).Lock(ctx, "k", WithLockOwner("gone"), withLockProcess(elsewhere), WithLockTTL(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// Check reads under the key's guard, creating its file: the test
	// watches that file.
	if _, _, err := l.Check("k"); err != nil {
		t.Fatal(err)
	}
	guard := onlyGuard(t, l.Dir)
	first, second := at(l, t0.Add(time.Hour)), at(l, t0.Add(time.Hour))
	secondDone := make(chan error, 1)
	var secondErr error
	secondEnded, windows := false, 0
	first.takeover = func() {
		if windows++; windows > 1 {
			return
		}
		go func() {
			_, err := second.Lock(ctx, "k", WithLockOwner("second"))
			secondDone <- err
		}()
		deadline := time.Now().Add(20 * time.Second)
		for !flockWaiter(t, guard) {
			select {
			case secondErr = <-secondDone:
				secondEnded = true
				return // it did not wait for the guard: let the first go on
			case <-time.After(time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatal("the second taker neither finished nor waited on the guard")
			}
		}
	}
	firstInfo, firstErr := first.Lock(ctx, "k", WithLockOwner("first"))
	if !secondEnded {
		secondErr = <-secondDone
	} else {
		t.Error("the second taker finished while the first was between judging the lock stale and removing it: the takeover is not guarded")
	}
	// Once the first has removed the stale record, both race to publish,
	// and either may win; exactly one must.
	winner, loserErr := "first", secondErr
	if firstErr != nil {
		winner, loserErr = "second", firstErr
	}
	var held *LockHeldError
	if !errors.As(loserErr, &held) || held.Holder.Owner != winner {
		t.Fatalf("first taker: %v; second taker: %v; want exactly one of them to get the lock and the other ErrLockHeld naming it", firstErr, secondErr)
	}
	cur, ok, err := l.Check("k")
	if err != nil || !ok || cur.Owner != winner || (winner == "first" && cur.Token != firstInfo.Token) {
		t.Errorf("the lock is %+v (held %v, %v), want %s's", cur, ok, err, winner)
	}
}

// onlyGuard returns the one guard file in dir (a test that uses one key
// has one).
func onlyGuard(t *testing.T, dir string) string {
	t.Helper()
	guards, err := filepath.Glob(filepath.Join(dir, guardPrefix+"*"))
	if err != nil || len(guards) != 1 {
		t.Fatalf("guard files in %s: %v, %v; want one", dir, guards, err)
	}
	return guards[0]
}

// flockWaiter reports whether some process waits for a flock(2) on path,
// from /proc/locks, where a blocked request is listed with "->" and the
// inode of its file ("1: -> FLOCK ADVISORY WRITE 7055 fe:00:10002437 0 EOF").
func flockWaiter(t *testing.T, path string) bool {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		t.Skipf("cannot see who waits on a flock: %v", err)
	}
	defer f.Close()
	ino := ":" + strconv.FormatUint(st.Ino, 10)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 7 && fields[1] == "->" && fields[2] == "FLOCK" && strings.HasSuffix(fields[6], ino) {
			return true
		}
	}
	return false
}
