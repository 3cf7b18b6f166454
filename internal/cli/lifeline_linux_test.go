package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/testbound"
	"github.com/pickup-dev/pickup/sessions"
)

// The commands that `work` and `lock run` start die with pickup, SIGKILL
// included, with every process they started; and nothing a command leaves
// behind outlives its run. Processes are found by a marker: a sleep
// duration that no other process on the machine uses.

var markerSeq atomic.Int32

// newMarker returns a sleep duration unique to this test process.
func newMarker() string {
	return fmt.Sprintf("30.%d%03d", os.Getpid(), markerSeq.Add(1))
}

// markerProcs returns the live processes whose arguments contain marker,
// but for pickup (whose own arguments hold it), and of those the sleeps
// ("sleep MARKER"). A zombie's cmdline is empty: it is not counted.
func markerProcs(t *testing.T, marker string, pickup int) (all, sleeps []int) {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pickup {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(data, []byte(marker)) {
			continue
		}
		all = append(all, pid)
		if string(data) == "sleep\x00"+marker+"\x00" {
			sleeps = append(sleeps, pid)
		}
	}
	return all, sleeps
}

// procState is the state letter of pid in /proc/PID/stat ('T': stopped),
// or 0 if there is no such process.
func procState(pid int) byte {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(data, ')')
	if err != nil || i < 0 || len(data) < i+3 {
		return 0
	}
	return data[i+2]
}

// startToFiles starts cmd with its output in files, not pipes: waiting for
// it must not wait for whatever else holds its output (a command's
// processes that survived, the watchdog). It is killed at the end of the
// test if still running.
func startToFiles(t *testing.T, cmd *exec.Cmd) (stderr func() string) {
	t.Helper()
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	errf, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	cmd.Stdout, cmd.Stderr = out, errf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return func() string {
		data, _ := os.ReadFile(errf.Name())
		return string(data)
	}
}

// waitExit waits up to d for cmd and returns its exit code (128+N if
// killed by signal N).
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	d = max(d, testbound.Idle) // only catches a hang (see eventually)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return exitCodeOf(err)
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s: still running after %s", cmd, d)
		return -1
	}
}

// noneLeft fails the test unless, within d, no process with marker is
// left but pickup.
func noneLeft(t *testing.T, marker string, pickup int, d time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		all, _ := markerProcs(t, marker, pickup)
		if len(all) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var list []string
			for _, pid := range all {
				cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				list = append(list, fmt.Sprintf("%d %q", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
				_ = syscall.Kill(pid, syscall.SIGKILL) // ours: do not leave them to the machine
			}
			t.Fatalf("%s: %d process(es) still run after %s:\n%s", what, len(all), d, strings.Join(list, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLifeline runs the process-level tests of the commands' lifeline on
// one build of the binary.
func TestLifeline(t *testing.T) {
	bin := lockBin(t)
	t.Run("WorkKilled", func(t *testing.T) { testLifelineWorkKilled(t, bin) })
	t.Run("LockRunKilled", func(t *testing.T) { testLifelineLockRunKilled(t, bin) })
	t.Run("WorkLeftovers", func(t *testing.T) { testLifelineWorkLeftovers(t, bin) })
	t.Run("LockRunLeftovers", func(t *testing.T) { testLifelineLockRunLeftovers(t, bin) })
	t.Run("SignalsReachTheGroup", func(t *testing.T) { testLifelineSignals(t, bin) })
	t.Run("LockRunTerminal", func(t *testing.T) { testLifelineLockRunTerminal(t, bin) })
	t.Run("WorkCtrlZ", func(t *testing.T) { testLifelineWorkCtrlZ(t, bin) })
}

// testLifelineWorkKilled: `pickup work -j 4` over 5 sessions is killed
// with SIGKILL while 4 commands run, each a shell waiting for a sleep;
// within seconds none of those 8 processes is left, so the sessions that
// another agent now recovers are not being worked on.
func testLifelineWorkKilled(t *testing.T, bin string) {
	lb := newLockBoard(t, bin)
	for i := range 5 {
		lb.want(0, "new", "--title", fmt.Sprintf("session %d", i))
	}
	marker := newMarker()
	work := lb.pickup("work", "-j", "4", "--owner", "w", "--", "sh", "-c", "sleep "+marker+"; true")
	stderr := startToFiles(t, work)
	eventually(t, 30*time.Second, "4 commands run", func() bool {
		_, sleeps := markerProcs(t, marker, work.Process.Pid)
		return len(sleeps) == 4
	})
	// The owner's lease holds the work process and its watchdog: the owner
	// counts as dead only once the watchdog has emptied every group.
	lease, err := (&claim.Leases{Board: lb.board}).Get("w")
	if err != nil || len(lease.Holders) != 2 || lease.Holders[0].PID != work.Process.Pid {
		t.Fatalf("work's lease = %+v, %v; want the work process (%d) and its watchdog", lease.Holders, err, work.Process.Pid)
	}
	if err := work.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, work, 10*time.Second); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("the killed work exited %d\nstderr:\n%s", code, stderr())
	}
	noneLeft(t, marker, 0, 5*time.Second, "the commands of a killed pickup work")
	// The watchdog exits a moment after the groups are empty; until then
	// the owner is alive and its sessions stay its own. (On a busy machine
	// the new run could start in that moment.)
	eventually(t, 10*time.Second, "the killed run's watchdog exits", func() bool {
		state, _, _ := (&claim.Leases{Board: lb.board}).Judge("w", 0)
		return state == claim.OwnerDead
	})

	// A new run of the same owner takes up the 4 sessions the killed one
	// held, says so, and finishes everything.
	r := lb.want(0, "work", "-j", "2", "--owner", "w", "--", "true")
	if n := strings.Count(r.stderr, "was still held by an earlier run of w whose processes exited"); n != 4 {
		t.Errorf("the new run reported %d sessions taken up, want 4\nstderr:\n%s", n, r.stderr)
	}
	if done, _ := lb.board.List(sessions.Done); len(done) != 5 {
		t.Errorf("%d sessions done after the new run, want 5\nstderr:\n%s", len(done), r.stderr)
	}
}

// testLifelineLockRunKilled: the same for `pickup lock run`, whose command
// leaves a sleep in the background and waits for another.
func testLifelineLockRunKilled(t *testing.T, bin string) {
	lb := newLockBoard(t, bin)
	marker := newMarker()
	run := lb.pickup("lock", "run", "k", "--", "sh", "-c", "sleep "+marker+" & sleep "+marker+"; true")
	stderr := startToFiles(t, run)
	eventually(t, 30*time.Second, "the command's 2 sleeps run", func() bool {
		_, sleeps := markerProcs(t, marker, run.Process.Pid)
		return len(sleeps) == 2
	})
	if err := run.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, run, 10*time.Second); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("the killed lock run exited %d\nstderr:\n%s", code, stderr())
	}
	noneLeft(t, marker, 0, 5*time.Second, "the command of a killed pickup lock run")
}

// testLifelineWorkLeftovers: a command that exits 0 leaving a sleep in the
// background: when work reports the session done, the sleep is gone.
func testLifelineWorkLeftovers(t *testing.T, bin string) {
	lb := newLockBoard(t, bin)
	lb.want(0, "new", "--title", "leaves a child")
	marker := newMarker()
	work := lb.pickup("--json", "work", "--owner", "w", "--", "sh", "-c", "sleep "+marker+" & exit 0")
	out, err := work.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	work.Stderr = os.Stderr
	if err := work.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = work.Process.Kill(); _ = work.Wait() }()
	sc := bufio.NewScanner(out)
	sawDone := false
	for sc.Scan() {
		var ev claim.WorkEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Event != "done" {
			continue
		}
		sawDone = true
		noneLeft(t, marker, work.Process.Pid, 0, "when work reports the session done, what its command left")
	}
	if !sawDone {
		t.Fatal("work reported no session done")
	}
	if code := waitExit(t, work, 10*time.Second); code != 0 {
		t.Errorf("work exited %d", code)
	}
}

// testLifelineLockRunLeftovers: the same for lock run: once it releases
// the lock, what its command left in the background is gone.
func testLifelineLockRunLeftovers(t *testing.T, bin string) {
	lb := newLockBoard(t, bin)
	marker := newMarker()
	run := lb.pickup("lock", "run", "k", "--", "sh", "-c", "touch started; sleep "+marker+" & exit 0")
	stderr := startToFiles(t, run)
	eventually(t, 30*time.Second, "the command started", func() bool {
		_, err := os.Stat(filepath.Join(lb.dir, "started"))
		return err == nil
	})
	eventually(t, 30*time.Second, "lock run released the lock", func() bool {
		_, held := lb.heldBy("k")
		return !held
	})
	noneLeft(t, marker, run.Process.Pid, 0, "when lock run released the lock, what its command left")
	if code := waitExit(t, run, 30*time.Second); code != 0 {
		t.Fatalf("lock run exited %d\nstderr:\n%s", code, stderr())
	}
}
