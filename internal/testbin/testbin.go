// Package testbin builds the real pickup command for the black-box tests
// that start it the ways users do (internal/e2e/userways, internal/e2e/sharedways,
// internal/e2e/claudee2e): once per test binary, without the race detector. A
// race-instrumented process spends about 0.1 s of CPU starting, and those
// tests start pickup hundreds or thousands of times; the race detector
// still covers the library and CLI packages' own tests.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Once builds pickup the first time Path is called and returns the same
// binary after that; a failed build fails every test that asks.
type Once struct {
	once sync.Once
	exe  string
	err  error
}

// Path returns the pickup binary, building it into dir/bin/pickup first.
func (o *Once) Path(tb testing.TB, dir string) string {
	tb.Helper()
	o.once.Do(func() { o.exe, o.err = Build(dir) })
	if o.err != nil {
		tb.Fatal(o.err)
	}
	return o.exe
}

// Build builds github.com/pickup-dev/pickup into dir/bin/pickup without the
// race detector and returns its path.
func Build(dir string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	exe := filepath.Join(dir, "bin", "pickup")
	out, err := exec.Command(gobin, "build", "-race=false", "-o", exe, "github.com/pickup-dev/pickup").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return exe, nil
}

// Main is a TestMain body: it makes a folder that outlives every test (for
// the binary that Once builds), sets *dir to it, runs the tests, removes the
// folder and returns the exit code for os.Exit.
func Main(m *testing.M, prefix string, dir *string) int {
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*dir = d
	defer os.RemoveAll(d)
	return m.Run()
}

// WaitDetached waits until no process works in a directory under root:
// pickup's detached processes (a shared board's heartbeat pushes, a
// SessionEnd release in commit mode) outlive the command that started
// them, and a test's folder must not be removed under them. It gives up
// once the same processes have worked there for 10 s with none ending or
// starting (a daemon that stays: the test's own cleanup ends it), or
// after two minutes in all; on a busy machine a chain of git processes
// can take longer than 10 s to end.
func WaitDetached(root string) {
	start, changed := time.Now(), time.Now()
	last := ""
	for time.Since(changed) < 10*time.Second && time.Since(start) < 2*time.Minute {
		busy := workingIn(root)
		if busy == "" {
			return
		}
		if busy != last {
			last, changed = busy, time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// workingIn lists the processes whose working directory is root or
// under it, as "pid pid …" ("" for none).
func workingIn(root string) string {
	var pids []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		if cwd, err := os.Readlink(p); err == nil && (cwd == root || strings.HasPrefix(cwd, root+"/")) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return strings.Join(pids, " ")
}
