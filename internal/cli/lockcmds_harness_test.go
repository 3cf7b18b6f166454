package cli

// The harness of the lock process tests (lockcmds_test.go,
// lockcmds_takeover_test.go): the real binary built once, a board to run
// it on, background processes, and polling.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/testbound"
	"github.com/pickup-dev/pickup/sessions"
)

// goBuild runs the go command with args (a build writing exe) and returns
// exe, or skips the test if there is no go command.
func goBuild(t *testing.T, exe string, args ...string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(gobin, append([]string{args[0], "-o", exe}, args[1:]...)...).CombinedOutput()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Skipf("no go command to build with: %v", err)
	}
	return exe
}

// lockBin builds the pickup binary, without -race.
func lockBin(t *testing.T) string {
	return goBuild(t, filepath.Join(t.TempDir(), "pickup"), "build", "-race=false", "github.com/pickup-dev/pickup")
}

// lockWorkerBin builds this package's tests without -race, for the
// counter's worker processes (TestLockCounterWorker): a race-instrumented
// worker spends most of the test's time in the detector, which cannot see
// races between processes anyway.
func lockWorkerBin(t *testing.T) string {
	return goBuild(t, filepath.Join(t.TempDir(), "cli.test"), "test", "-c", "-race=false", "github.com/pickup-dev/pickup/internal/cli")
}

// lockBoard is a board and the pickup binary to run on it.
type lockBoard struct {
	t     *testing.T
	bin   string
	dir   string // working directory of the commands
	board *sessions.Board
}

func newLockBoard(t *testing.T, bin string) *lockBoard {
	t.Helper()
	dir := t.TempDir()
	b, err := sessions.Init(filepath.Join(dir, "board"))
	if err != nil {
		t.Fatal(err)
	}
	return &lockBoard{t: t, bin: bin, dir: dir, board: b}
}

// env is the commands' environment: no PICKUP_* from outside, the board,
// and $PK naming the binary for shell scripts.
func (lb *lockBoard) env(extra ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "PICKUP_") || strings.HasPrefix(kv, "CLAUDE_SESSION_ID=") || strings.HasPrefix(kv, "CODEX_THREAD_ID=")
	})
	return append(env, append([]string{"PICKUP_DIR=" + lb.board.Dir, "PK=" + lb.bin}, extra...)...)
}

// pickup returns a command running pickup with args.
func (lb *lockBoard) pickup(args ...string) *exec.Cmd {
	cmd := exec.Command(lb.bin, args...)
	cmd.Dir, cmd.Env = lb.dir, lb.env()
	return cmd
}

// sh returns a command running a shell script in the board's directory.
func (lb *lockBoard) sh(script string, env ...string) *exec.Cmd {
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir, cmd.Env = lb.dir, lb.env(env...)
	return cmd
}

type lockResult struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// run runs cmd to its end, failing the test if it cannot start or takes
// more than two minutes.
func (lb *lockBoard) run(cmd *exec.Cmd) lockResult {
	lb.t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		lb.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		lb.t.Fatalf("%s: still running after 2 minutes\nstderr:\n%s", cmd, errOut.String())
	}
	r := lockResult{code: exitCodeOf(err), stdout: out.String(), stderr: errOut.String(), took: time.Since(t0)}
	if r.code < 0 {
		lb.t.Fatalf("%s: %v", cmd, err)
	}
	return r
}

// exitCodeOf is the shell's exit status of a finished command: 128+N for
// a kill by signal N, -1 if it did not run.
func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return -1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

// want runs pickup with args and requires exit code code.
func (lb *lockBoard) want(code int, args ...string) lockResult {
	lb.t.Helper()
	r := lb.run(lb.pickup(args...))
	if r.code != code {
		lb.t.Fatalf("pickup %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	return r
}

// start starts cmd in the background, output to buffers.
func (lb *lockBoard) start(cmd *exec.Cmd) *bgCmd {
	lb.t.Helper()
	bg := &bgCmd{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &bg.stdout, &bg.stderr
	if err := cmd.Start(); err != nil {
		lb.t.Fatal(err)
	}
	go func() {
		bg.err = cmd.Wait()
		close(bg.done)
	}()
	lb.t.Cleanup(func() {
		select {
		case <-bg.done:
		default:
			_ = cmd.Process.Kill()
			<-bg.done
		}
	})
	return bg
}

type bgCmd struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer // read only after done
	err            error
	done           chan struct{}
}

// wait waits for the command and returns its exit code. d is what the
// step may take on a quiet machine; the bound, which only catches a hang,
// is never below testbound.Idle (a busy machine is many times slower).
func (bg *bgCmd) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	d = max(d, testbound.Idle)
	select {
	case <-bg.done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %s", bg.cmd, d)
	}
	return exitCodeOf(bg.err)
}

// eventually polls cond every 10 ms until it holds. d is what the step may
// take on a quiet machine; the bound, which only catches a hang, is never
// below testbound.Idle (a busy machine is many times slower).
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

// heldBy reports who holds key ("" if nobody alive does), read with the
// library.
func (lb *lockBoard) heldBy(key string) (claim.LockInfo, bool) {
	lb.t.Helper()
	info, held, err := claim.BoardLocks(lb.board).Check(key)
	if err != nil {
		lb.t.Fatal(err)
	}
	return info, held
}

// gone reports whether pid has exited (or is a zombie waiting for its
// parent).
func gone(pid int) bool {
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return true
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	i := bytes.LastIndexByte(data, ')')
	return i > 0 && len(data) > i+2 && data[i+2] == 'Z'
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pid
}
