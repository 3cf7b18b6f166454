package claim_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/roles"

	"github.com/pickup-dev/pickup/internal/cli"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sync/errgroup"
)

// The test binary doubles as the pickup command and as the crash test's
// worker: with PICKUP_TEST_AS_CLI=1 it runs the CLI on its arguments, with
// PICKUP_TEST_LOOP set it runs a worker loop (crash_test.go), instead of
// the tests. This avoids a slow `go build` and tests the real CLI code.
const (
	envAsCLI = "PICKUP_TEST_AS_CLI"
	envLoop  = "PICKUP_TEST_LOOP"
)

func TestMain(m *testing.M) {
	if code, ok := roles.Run(os.Args); ok { // pickup in-process starts itself as a watchdog
		os.Exit(code)
	}
	switch {
	case os.Getenv(envAsCLI) == "1":
		os.Exit(cli.Main(cli.OSEnv(), os.Args))
	case os.Getenv(envLoop) != "":
		os.Exit(crashWorker(os.Getenv(envLoop)))
	}
	os.Exit(m.Run())
}

// pkSelf returns the path of the running test binary.
func pkSelf(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary to run as pickup: %v", err)
	}
	return exe
}

// pickupBinary returns the pickup command to run: the real binary, built
// once with `go build` (without -race: a race-instrumented process spends
// about 0.1 s of CPU starting, which for 2,000 runs is minutes), or, if
// there is no go command, this test binary acting as pickup.
func pickupBinary(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	exe := filepath.Join(t.TempDir(), "pickup")
	cmd := exec.Command(gobin, "build", "-race=false", "-o", exe, "github.com/pickup-dev/pickup")
	out, err := cmd.CombinedOutput()
	if err == nil {
		return exe
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("go build: %v\n%s", err, out) // the command exists: a real failure
	}
	t.Logf("no go command (%v): running this test binary as pickup", err)
	return pkSelf(t)
}

// pickupCmd returns a command running the pickup CLI with args: exe is the
// real binary or this test binary, which then acts as pickup (TestMain).
func pickupCmd(exe string, args ...string) *exec.Cmd {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), envAsCLI+"=1", "PICKUP_DIR=", "PICKUP_OWNER=", "PICKUP_NO_SYNC=",
		// A race-instrumented process sleeps 1 s at exit by default.
		"GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	return cmd
}

// pkSeed writes n sessions to todo/ (ids s0000…) and warms the listing
// cache, as the first claimer on a real board would.
func pkSeed(t *testing.T, b *sessions.Board, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%04d", i)
		pkPut(t, b, sessions.Todo, "", ids[i], pkSeedMeta(ids[i]))
	}
	if _, err := b.List(sessions.Todo); err != nil {
		t.Fatal(err)
	}
	return ids
}

// pkCheckClaimedOnce checks that wins (owner -> ids it claimed) names every
// id exactly once, and that the board agrees: todo/ and done/ are empty and
// each id is in doing/<the owner that won it>/.
func pkCheckClaimedOnce(t *testing.T, b *sessions.Board, ids []string, wins map[string][]string) {
	t.Helper()
	winner := map[string]string{}
	total := 0
	for owner, list := range wins {
		for _, id := range list {
			total++
			if prev, dup := winner[id]; dup {
				t.Errorf("session %s claimed twice: by %s and by %s", id, prev, owner)
			}
			winner[id] = owner
		}
	}
	for _, id := range ids {
		if _, ok := winner[id]; !ok {
			t.Errorf("session %s never claimed", id)
		}
	}
	if total != len(ids) {
		t.Errorf("%d claims recorded, want %d", total, len(ids))
	}
	w, err := pkWalk(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != len(ids) {
		t.Errorf("the board holds %d names, want %d", len(w), len(ids))
	}
	bad := 0
	for name, places := range w {
		if want := "doing/" + winner[name]; len(places) != 1 || places[0] != want {
			if bad++; bad <= 10 {
				t.Errorf("%s is at %v, want [%s]", name, places, want)
			}
		}
	}
}

// TestProcessesDrainBoard: 8 OS processes, each looping `pickup next` (one
// process per claim) until it exits 3, drain 2,000 sessions; every session
// is claimed by exactly one process.
func TestProcessesDrainBoard(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 200
	}
	const procs = 8
	exe := pickupBinary(t)
	b := pkBoard(t)
	ids := pkSeed(t, b, n)

	var (
		mu    sync.Mutex
		wins  = map[string][]string{}
		calls int
	)
	start := time.Now()
	var g errgroup.Group
	for p := 0; p < procs; p++ {
		owner := fmt.Sprintf("p%d", p)
		g.Go(func() error {
			for {
				var stdout, stderr bytes.Buffer
				cmd := pickupCmd(exe, "--dir", b.Dir, "--owner", owner, "--no-sync", "next", "--json")
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				mu.Lock()
				calls++
				mu.Unlock()
				var exit *exec.ExitError
				if errors.As(err, &exit) && exit.ExitCode() == cli.ExitNotAvailable {
					if !strings.Contains(stderr.String(), "nothing") {
						return fmt.Errorf("%s: exit 3 without saying nothing is available: %s", owner, stderr.String())
					}
					return nil
				}
				if err != nil {
					return fmt.Errorf("%s: pickup next: %v\nstdout: %s\nstderr: %s", owner, err, stdout.String(), stderr.String())
				}
				var s struct {
					ID, State, Owner string
				}
				if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
					return fmt.Errorf("%s: output %q: %v", owner, stdout.String(), err)
				}
				if s.State != "doing" || s.Owner != owner {
					return fmt.Errorf("%s: claimed %s but it is %s/%s", owner, s.ID, s.State, s.Owner)
				}
				mu.Lock()
				wins[owner] = append(wins[owner], s.ID)
				mu.Unlock()
			}
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	t.Logf("%d processes drained %d sessions with %d pickup runs in %v (%v per run, wall clock)",
		procs, n, calls, elapsed.Round(time.Millisecond), (elapsed / time.Duration(calls)).Round(time.Microsecond))
	pkCheckClaimedOnce(t, b, ids, wins)
}
