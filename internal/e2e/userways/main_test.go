package userways

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbin"
	"github.com/pickup-dev/pickup/internal/testbound"
)

// tmpRoot holds what outlives one test: the pickup binary.
var tmpRoot string

func TestMain(m *testing.M) { os.Exit(testbin.Main(m, "userways-", &tmpRoot)) }

var build testbin.Once

// pickupBinary builds the real pickup once per test binary run. It is built
// without -race even when the tests are: a race-instrumented process spends
// about 0.1 s of CPU starting, and these tests start pickup thousands of
// times.
func pickupBinary(t *testing.T) string {
	t.Helper()
	return build.Path(t, tmpRoot)
}

// cleared are the variables that choose pickup's owner, board, process or
// durability: a child must get only what the test sets.
var cleared = []string{"PICKUP_DIR", "PICKUP_OWNER", "PICKUP_PID", "PICKUP_NO_SYNC",
	"CLAUDE_SESSION_ID", "CLAUDE_CODE_SESSION_ID", "CLAUDE_ENV_FILE", "CODEX_THREAD_ID"}

// markerVar, set to the test's work directory in every child's environment,
// finds the test's processes again: those that left its process group
// (setsid) or outlived their script (nohup) are killed when the test ends.
const markerVar = "USERWAYS_RUN"

// A board is a fresh pickup board and the directory where a test's scripts
// run and write their results (claims, errors, pickup.log, ...).
type board struct {
	t    *testing.T
	dir  string // the board: PICKUP_DIR
	work string // the scripts' working directory
	env  []string
}

// newBoard makes an empty board. Its children run with the pickup binary
// first in PATH, PICKUP_DIR set to the board and PICKUP_NO_SYNC=1 (fsync
// has nothing to do with ownership, and costs seconds), and none of the
// owner variables.
func newBoard(t *testing.T) *board {
	t.Helper()
	exe := pickupBinary(t)
	work := t.TempDir()
	b := &board{t: t, dir: filepath.Join(work, "board"), work: work}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "PATH" || isCleared(name) {
			continue
		}
		b.env = append(b.env, kv)
	}
	b.env = append(b.env,
		"PATH="+filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PICKUP_DIR="+b.dir,
		"PICKUP_NO_SYNC=1",
		markerVar+"="+work,
	)
	t.Cleanup(func() { killMarked(t, work) })
	b.pickup(context.Background(), "init")
	return b
}

func isCleared(name string) bool {
	for _, c := range cleared {
		if name == c {
			return true
		}
	}
	return false
}

// seed creates n sessions with `pickup new`, a few at a time, and returns
// their ids.
func (b *board) seed(ctx context.Context, n int) []string {
	b.t.Helper()
	const par = 4
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, par)
	for w := 0; w < par; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += par {
				out, err := b.output(ctx, "pickup", "new", "--title", fmt.Sprintf("session %d", i))
				if err != nil {
					errs <- err
					return
				}
				ids[i] = strings.TrimSpace(out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.t.Fatal(err)
	}
	return ids
}

// pickup runs pickup with args and returns its stdout; any failure is
// fatal.
func (b *board) pickup(ctx context.Context, args ...string) string {
	b.t.Helper()
	out, err := b.output(ctx, "pickup", args...)
	if err != nil {
		b.t.Fatal(err)
	}
	return out
}

// output runs name (looked up in the children's PATH) in the work
// directory and returns its stdout; the error includes stderr.
func (b *board) output(ctx context.Context, name string, args ...string) (string, error) {
	cmd := b.command(ctx, append([]string{name}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// command returns a command running cmdline in the work directory with the
// children's environment, in a process group of its own that is killed
// whole when ctx ends.
func (b *board) command(ctx context.Context, cmdline ...string) *exec.Cmd {
	name, args := cmdline[0], cmdline[1:]
	path := name
	if !strings.Contains(name, "/") {
		path = lookPath(b.env, name)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Args[0] = name
	cmd.Dir, cmd.Env = b.work, b.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Background children that keep stdout open must not hold Wait.
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// lookPath finds name in the PATH of env, the way the children will.
func lookPath(env []string, name string) string {
	for _, kv := range env {
		if dirs, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range filepath.SplitList(dirs) {
				p := filepath.Join(dir, name)
				if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
					return p
				}
			}
		}
	}
	return name // exec reports it missing
}

// install copies testdata/name into the work directory, executable, as a
// user would have it next to the board.
func (b *board) install(names ...string) {
	b.t.Helper()
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(b.work, name), data, 0o755); err != nil {
			b.t.Fatal(err)
		}
	}
}

// file returns the contents of the work directory's file name ("" if it
// does not exist).
func (b *board) file(name string) string {
	data, err := os.ReadFile(filepath.Join(b.work, name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		b.t.Fatal(err)
	}
	return string(data)
}

// lines returns the non-empty lines of the work directory's file name.
func (b *board) lines(name string) []string {
	var out []string
	for _, l := range strings.Split(b.file(name), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// testContext bounds a test: a broken pickup fails it instead of hanging.
// The bound counts from the last progress (a board's events.log or a file
// the scripts write in their work directory grew), not from the test's
// start: a drain of hundreds of sessions passes however slowly a busy
// machine runs it, and a hang ends after testbound.Idle.
func testContext(t *testing.T) context.Context {
	t.Helper()
	pickupBinary(t)                   // the first test builds it: a step the bound does not count
	root := filepath.Dir(t.TempDir()) // every t.TempDir of this test is in it
	w := testbound.New(t, 0)
	w.Observe(func() string {
		var n int64
		boards, _ := filepath.Glob(filepath.Join(root, "*", "board", "events.log"))
		files, _ := filepath.Glob(filepath.Join(root, "*", "*"))
		for _, f := range append(boards, files...) {
			if info, err := os.Stat(f); err == nil && info.Mode().IsRegular() {
				n += info.Size()
			}
		}
		return fmt.Sprintf("%d bytes of events and script output", n)
	})
	return w.Context()
}

// killMarked SIGKILLs every process whose environment carries this test's
// marker: workers started with setsid or nohup that are still running when
// the test ends (only when it failed or timed out).
func killMarked(t *testing.T, work string) {
	want := []byte(markerVar + "=" + work + "\x00")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			t.Logf("killed leftover process %d", pid)
		}
	}
}
