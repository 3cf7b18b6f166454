package boardfeed

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pickup-dev/pickup/claim"
	"golang.org/x/sys/unix"
)

// lockWaitersDir is where pickup lock --wait queues the waiters of a key:
// one file per key beside the lock directory, each waiter holding or
// awaiting a flock(2) of it (internal/cli/lockwait.go).
const lockWaitersDir = "lock-waiters"

// waiters counts the processes queued for lock i: the flocks held and
// awaited on its queue file, as /proc/locks lists them. A waiter that
// could not queue waits unqueued and is not counted.
func waiters(locksDir string, i claim.LockInfo) int {
	if i.Path == "" {
		return 0
	}
	var st unix.Stat_t
	if unix.Stat(filepath.Join(filepath.Dir(locksDir), lockWaitersDir, filepath.Base(i.Path)), &st) != nil {
		return 0
	}
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// "1: FLOCK ADVISORY WRITE pid dev:ino 0 EOF", or with "->" after
		// the number for a waiter that is blocked.
		if len(fields) >= 6 && strings.Contains(sc.Text(), "FLOCK") && fields[len(fields)-3] == id {
			n++
		}
	}
	return n
}
