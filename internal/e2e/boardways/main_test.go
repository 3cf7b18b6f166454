package boardways

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbin"
	"github.com/pickup-dev/pickup/internal/testbound"
)

var tmpRoot string

func TestMain(m *testing.M) { os.Exit(testbin.Main(m, "boardways-", &tmpRoot)) }

var (
	build     testbin.Once
	boardOnce sync.Once
	boardErr  error
)

// binDir builds pickup and, beside it, pickup-board (where pickup board
// looks first), and returns their folder.
func binDir(t testing.TB) string {
	t.Helper()
	exe := build.Path(t, tmpRoot)
	dir := filepath.Dir(exe)
	boardOnce.Do(func() {
		out, err := exec.Command("go", "build", "-race=false", "-o", filepath.Join(dir, "pickup-board"),
			"github.com/pickup-dev/pickup/internal/cmd/pickup-board").CombinedOutput()
		if err != nil {
			boardErr = fmt.Errorf("go build pickup-board: %v\n%s", err, out)
		}
	})
	if boardErr != nil {
		t.Fatal(boardErr)
	}
	return dir
}

// env is the environment of the board and the agents: pickup on PATH, the
// board in PICKUP_DIR, nothing of the user's.
func env(bin, board string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PICKUP_") || strings.HasPrefix(k, "CLAUDE") || k == "PATH" || k == "TMUX" || k == "CODEX_THREAD_ID" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "PICKUP_DIR="+board, "PICKUP_NO_SYNC=1", "TERM=xterm-256color")
}

// term is a tmux server of the test's own (its own socket) with one pane.
type term struct {
	t      testing.TB
	socket string
	env    []string
	poll   time.Duration // between two looks at the screen (default 20 ms)
}

// newTerm starts cmd in a detached tmux session of w×h.
func newTerm(t testing.TB, env []string, w, h int, cmd string) *term {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (scripts/test installs it)")
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	tm := &term{t: t, socket: fmt.Sprintf("boardways-%d-%x", os.Getpid(), rnd), env: env}
	tm.tmux("new-session", "-d", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), cmd)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", tm.socket, "kill-server").Run() })
	return tm
}

func (tm *term) tmux(args ...string) string {
	tm.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-L", tm.socket}, args...)...)
	cmd.Env = tm.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is what the pane shows.
func (tm *term) screen() string { return tm.tmux("capture-pane", "-p") }

// waitFor polls the screen until ok holds and returns how long that took;
// it fails the test (showing the screen) if it never does. limit is the
// target on a quiet machine: a slower screen is logged, not failed (the
// benchmarks measure speed; a busy machine is many times slower), and the
// test fails only after max(limit, testbound.Idle), which catches a hang.
func (tm *term) waitFor(what string, limit time.Duration, ok func(screen string) bool) time.Duration {
	tm.t.Helper()
	start := time.Now()
	bound := max(limit, testbound.Idle)
	for {
		s := tm.screen()
		if ok(s) {
			took := time.Since(start)
			if took > limit {
				tm.t.Logf("%s: on the screen after %v, slower than the %v a quiet machine takes", what, took.Round(time.Millisecond), limit)
			}
			return took
		}
		if time.Since(start) > bound {
			// The screen without its blank tail, then its header and
			// status lines again: a report that keeps only the last
			// lines of a failure still shows what the board said.
			screen := strings.TrimRight(s, " \n")
			top := strings.SplitN(screen, "\n", 4)
			tm.t.Fatalf("%s: not on the screen after %v:\n%s\n(end of the screen; its first lines:)\n%s", what, bound, screen, strings.Join(top[:min(3, len(top))], "\n"))
		}
		time.Sleep(cmp.Or(tm.poll, 20*time.Millisecond))
	}
}

// panePID is the pid of the pane's process.
func (tm *term) panePID() int {
	tm.t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(tm.tmux("list-panes", "-F", "#{pane_pid}")))
	if err != nil {
		tm.t.Fatal(err)
	}
	return pid
}

// cpuTicks is the CPU time pid used so far (utime + stime, clock ticks).
func cpuTicks(t testing.TB, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command, which is in parentheses.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return u + s
}

// comm is the name pid runs as.
func comm(pid int) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(data))
}
