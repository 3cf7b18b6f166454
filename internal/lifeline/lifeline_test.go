package lifeline

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The test binary is a watchdog when run with Arg (the package's init does
// that), and with envPickup set it plays pickup: it starts a lifeline and
// some command groups, says so, and waits to be killed.
const envPickup = "LIFELINE_TEST_PICKUP"

func TestMain(m *testing.M) {
	if marker := os.Getenv(envPickup); marker != "" {
		os.Exit(playPickup(marker))
	}
	os.Exit(m.Run())
}

// playPickup starts a lifeline and three groups of a shell and two sleeps
// (one in the background), prints "started WATCHDOG-PID" and blocks.
func playPickup(marker string) int {
	l, err := Start(os.Args[0], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for range 3 {
		cmd := exec.Command("sh", "-c", fmt.Sprintf("sleep %s & sleep %s; true", marker, marker))
		if _, err := l.Start(cmd); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Printf("started %d\n", l.PID())
	select {}
}

var markers atomic.Int32

// newMarker is a sleep duration no other process on the machine uses
// (this test process's pid is in it): the processes of a test are found by
// it in /proc/*/cmdline.
func newMarker() string {
	return fmt.Sprintf("30.%d%03d", os.Getpid(), markers.Add(1))
}

// withMarker returns the pids of the live processes with marker among
// their arguments. A zombie's cmdline is empty: zombies do not count.
func withMarker(t *testing.T, marker string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to find processes in: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if bytes.Contains(data, []byte(marker)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func needLinux(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("finds processes in /proc")
	}
}

// TestPickupKilled: a process that started a lifeline and three command
// groups, each a shell with a sleep in the foreground and one in the
// background, is killed with SIGKILL; every one of those processes dies
// with it, and the watchdog exits once they have.
func TestPickupKilled(t *testing.T) {
	needLinux(t)
	marker := newMarker()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envPickup+"="+marker)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the playing pickup did not start: %v", err)
	}
	watchdog, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "started ")))
	if err != nil || watchdog <= 0 {
		t.Fatalf("the playing pickup said %q", line)
	}
	eventually(t, 30*time.Second, "9 processes run (3 shells and their 6 sleeps)", func() bool { return len(withMarker(t, marker)) == 9 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	eventually(t, 5*time.Second, "every process of the killed pickup's groups died", func() bool { return len(withMarker(t, marker)) == 0 })
	eventually(t, 5*time.Second, "the watchdog exited", func() bool {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", watchdog))
		st, _, ok := parseStat(data)
		return err != nil || (ok && st == 'Z')
	})
}

// TestEnd: End kills the background child that a command left behind once
// the command itself has exited, and waits until it is gone; Close then
// finds nothing left to kill.
func TestEnd(t *testing.T) {
	needLinux(t)
	l, err := Start(os.Args[0], os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	marker := newMarker()
	cmd := exec.Command("sh", "-c", "sleep "+marker+" & exit 0")
	g, err := l.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(withMarker(t, marker)) != 1 {
		t.Fatalf("the background sleep does not run: %v", withMarker(t, marker))
	}
	if err := g.End(); err != nil {
		t.Fatal(err)
	}
	if pids := withMarker(t, marker); len(pids) != 0 {
		t.Errorf("End returned while %v still ran", pids)
	}
	if err := l.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// TestCloseKillsListed: groups still listed when pickup closes its end
// (it exits without ending them) are killed, background children and all.
// The watchdog ignores the signals a terminal or a shell sends a job.
func TestCloseKillsListed(t *testing.T) {
	needLinux(t)
	l, err := Start(os.Args[0], os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	marker := newMarker()
	cmd := exec.Command("sh", "-c", "sleep "+marker+" & sleep "+marker+"; true")
	if _, err := l.Start(cmd); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the shell and its sleeps run", func() bool { return len(withMarker(t, marker)) == 3 })
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGTSTP} {
		if err := syscall.Kill(l.PID(), sig); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if pids := withMarker(t, marker); len(pids) != 0 {
		t.Errorf("the watchdog exited while %v still ran", pids)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the command's shell: %v, want killed", err)
	}
}

// TestWatchdogLost: when the watchdog is gone, starting a command still
// works and says once that the lifeline is lost.
func TestWatchdogLost(t *testing.T) {
	needLinux(t)
	var warn bytes.Buffer
	l, err := Start(os.Args[0], &warn)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(l.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = l.cmd.Wait()
	for range 2 {
		cmd := exec.Command("true")
		g, err := l.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if err := g.End(); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(warn.String(), "is gone"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, warn.String())
	}
	_ = l.Close()
}

// TestWatchdogByHand: run without a pipe on its standard input, the
// watchdog refuses (it would read a terminal).
func TestWatchdogByHand(t *testing.T) {
	cmd := exec.Command(os.Args[0], Arg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "internal command") {
		t.Errorf("watchdog without a pipe: %v, stderr %q", err, stderr.String())
	}
}

func TestReadGroups(t *testing.T) {
	var diag bytes.Buffer
	got := readGroups(strings.NewReader("+10\n+11\n-10\n+1\n+0\n-x\n\n+12\n"), &diag)
	if len(got) != 2 || !got[11] || !got[12] {
		t.Errorf("groups %v, want 11 and 12", got)
	}
	if n := strings.Count(diag.String(), "ignoring"); n != 4 {
		t.Errorf("%d lines ignored, want 4 (+1, +0, -x, empty):\n%s", n, diag.String())
	}
}

func TestSignalGroupRefusesOwnAndAll(t *testing.T) {
	for _, pgid := range []int{-5, 0, 1} {
		if err := signalGroup(pgid, 0); err == nil {
			t.Errorf("signalGroup(%d) did not refuse", pgid)
		}
	}
}
