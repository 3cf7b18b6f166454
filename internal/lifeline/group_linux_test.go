package lifeline

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbound"
)

func TestParseStat(t *testing.T) {
	for _, tt := range []struct {
		line  string
		state byte
		pgid  int
		ok    bool
	}{
		{"123 (sleep) S 1 77 1 0 -1", 'S', 77, true},
		{"123 (a) b) (c) Z 1 78 1 0", 'Z', 78, true},
		{"123 (x", 0, 0, false},
		{"123 (x) S 1", 0, 0, false},
	} {
		st, pg, ok := parseStat([]byte(tt.line))
		if st != tt.state || pg != tt.pgid || ok != tt.ok {
			t.Errorf("parseStat(%q) = %q, %d, %v; want %q, %d, %v", tt.line, st, pg, ok, tt.state, tt.pgid, tt.ok)
		}
	}
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

// eventually polls cond until it holds. d is what the step takes on a
// quiet machine; the bound, which only catches a hang, is never below
// testbound.Idle (a busy machine is many times slower).
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	d = max(d, testbound.Idle)
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPickupKilled: a process that started a lifeline and three command
// groups, each a shell with a sleep in the foreground and one in the
// background, is killed with SIGKILL; every one of those processes dies
// with it, and the watchdog exits once they have.
func TestPickupKilled(t *testing.T) {
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
	// The shell may exit before its child has exec'd sleep: the child is
	// then still a shell, without the marker, for a moment.
	eventually(t, 5*time.Second, "the background sleep runs", func() bool { return len(withMarker(t, marker)) == 1 })
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

// TestGate: a command started through the gate is the process pickup
// started (the gate execs in place), with its own argv[0], environment and
// directory, and no descriptor more than without the gate.
func TestGate(t *testing.T) {
	l, err := Start(os.Args[0], os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	run := func(l *Lifeline) (pid int, out []string) {
		cmd := exec.Command("sh", "-c", `echo "$$ $0 $GATE_TEST $(pwd)"; ls /proc/$$/fd`)
		cmd.Args[0] = "my-sh"
		cmd.Env = append(os.Environ(), "GATE_TEST=passed")
		cmd.Dir = dir
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		g, err := l.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		if err := g.End(); err != nil {
			t.Fatal(err)
		}
		if cmd.Args[0] != "my-sh" || filepath.Base(cmd.Path) != "sh" {
			t.Errorf("Start left cmd as %s %q, not as the caller made it", cmd.Path, cmd.Args)
		}
		return cmd.Process.Pid, strings.Split(strings.TrimSpace(stdout.String()), "\n")
	}
	pid, gated := run(l)
	if want := fmt.Sprintf("%d my-sh passed %s", pid, dir); gated[0] != want {
		t.Errorf("the command says %q, want %q", gated[0], want)
	}
	_, direct := run(nil)
	if fmt.Sprint(gated[1:]) != fmt.Sprint(direct[1:]) {
		t.Errorf("the command's descriptors: %v through the gate, %v without", gated[1:], direct[1:])
	}
}

// TestGateInherited: TestGate again, in a process that inherited two
// descriptors above stderr open across exec, as a make jobserver's pipe
// or a wrapper's log reaches pickup: a command started directly gets them
// at their numbers, and so must one started through the gate (whose own
// pipes once took 3 and 4 and left it without them).
func TestGateInherited(t *testing.T) {
	if os.Getenv("LIFELINE_TEST_INHERITED") != "" {
		t.Skip("already the process with the inherited descriptors")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGate$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "LIFELINE_TEST_INHERITED=1")
	cmd.ExtraFiles = []*os.File{r, w} // 3 and 4, open across exec
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestGate ") {
		t.Fatalf("TestGate with descriptors 3 and 4 inherited: %v\n%s", err, out)
	}
}

// TestGateCannotExec: a command that its gate cannot exec exits 127 or
// 126 as it would from a shell, and StartErr says why; a command that runs
// and exits 127 itself has no StartErr. Only StartErr tells them apart.
func TestGateCannotExec(t *testing.T) {
	l, err := Start(os.Args[0], os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	tests := []struct {
		name  string
		path  string
		args  []string
		code  int
		errno syscall.Errno // 0: the command ran
	}{
		{name: "not executable", path: write("script", "echo hi\n", 0o644), code: 126, errno: syscall.EACCES},
		{name: "not there", path: filepath.Join(dir, "nope"), code: 127, errno: syscall.ENOENT},
		{name: "no format the system runs", path: write("garbage", "\x00\x01\x02\x03binary", 0o755), code: 126, errno: syscall.ENOEXEC},
		{name: "a directory", path: dir, code: 126, errno: syscall.EACCES},
		{name: "runs and exits 127 itself", path: sh, args: []string{"-c", "exit 127"}, code: 127},
		{name: "runs", path: sh, args: []string{"-c", "exit 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := &exec.Cmd{Path: tt.path, Args: append([]string{filepath.Base(tt.path)}, tt.args...)}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			g, err := l.Start(cmd)
			if err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			startErr := g.StartErr()
			if err := g.End(); err != nil {
				t.Error(err)
			}
			if code := cmd.ProcessState.ExitCode(); code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			if tt.errno == 0 {
				if startErr != nil {
					t.Errorf("StartErr = %v, want nil: the command ran", startErr)
				}
				return
			}
			var pe *fs.PathError
			if !errors.As(startErr, &pe) || pe.Op != "exec" || pe.Path != tt.path || !errors.Is(startErr, tt.errno) {
				t.Errorf("StartErr = %#v, want exec %s: %v", startErr, tt.path, tt.errno)
			}
			if g.StartErr() != startErr {
				t.Error("a second StartErr says something else")
			}
			if stderr.Len() > 0 {
				t.Errorf("the gate wrote %q: reporting is pickup's", stderr.String())
			}
		})
	}
	// Not found at all: Start says so, as exec.Cmd.Start would.
	if _, err := l.Start(exec.Command("pickup-no-such-command")); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("a command not found: %v", err)
	}
}

// TestGateClosed: a gate whose pickup is gone before it opened (end of
// file) does not run the command. The gate runs as a process of its own:
// were it to exec the command here, the test binary would be gone.
func TestGateClosed(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	ran := filepath.Join(t.TempDir(), "ran")
	touch, err := exec.LookPath("touch")
	if err != nil {
		t.Skip(err)
	}
	status, report, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer status.Close()
	cmd := exec.Command(os.Args[0], ArgGate, "3", "4", touch, "touch", ran)
	cmd.ExtraFiles = []*os.File{r, report}
	err = cmd.Run()
	r.Close()
	report.Close()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("the gate exited %d (%v), want 1", code, err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the command ran")
	}
}
