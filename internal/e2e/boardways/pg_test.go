package boardways

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/privatepg"
)

var (
	helperOnce sync.Once
	helperErr  error
)

// pgBinDir is binDir with pickup-postgres beside pickup and pickup-board
// (where both look for it first).
func pgBinDir(t *testing.T) string {
	t.Helper()
	bin := binDir(t)
	helperOnce.Do(func() {
		out, err := exec.Command("go", "build", "-race=false", "-o", filepath.Join(bin, "pickup-postgres"),
			"github.com/pickup-dev/pickup/internal/cmd/pickup-postgres").CombinedOutput()
		if err != nil {
			helperErr = fmt.Errorf("go build pickup-postgres: %v\n%s", err, out)
		}
	})
	if helperErr != nil {
		t.Fatal(helperErr)
	}
	return bin
}

// startPG starts a private PostgreSQL server for one test and stops it at
// its end.
func startPG(t *testing.T) *privatepg.Server {
	t.Helper()
	if _, err := os.Stat(filepath.Join(privatepg.BinDir(), "initdb")); err != nil {
		t.Skip("PostgreSQL is not installed (scripts/test installs it)")
	}
	dir, err := os.MkdirTemp(tmpRoot, "pg-")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := privatepg.Start(dir, privatepg.Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop("immediate") })
	return srv
}

// pgEnv is env for a PostgreSQL board: nobody's PG* settings, the
// helper's daemon sockets in a folder of the test's (the daemons exit when
// it is removed, at the test's end).
func pgEnv(t *testing.T, bin, board, runDir string) []string {
	var out []string
	for _, kv := range env(bin, board) {
		if !strings.HasPrefix(kv, "PG") {
			out = append(out, kv)
		}
	}
	return append(out, "PICKUP_PG_RUNDIR="+runDir, "PICKUP_PG_IDLE=5s")
}

// TestBoardFollowsPostgres: pickup board in a real terminal on a
// PostgreSQL board shows what another clone (another machine, for the
// database) does, without a key pressed: a claim there appears with its
// owner within about a second, a done there moves the session; a
// database that stops answering is said on the status line while the
// last view stays, and the board recovers when it answers again.
func TestBoardFollowsPostgres(t *testing.T) {
	bin := pgBinDir(t)
	srv := startPG(t)
	url := srv.URL("postgres")
	root := t.TempDir()
	runDir := filepath.Join(root, "run")
	if err := os.Mkdir(runDir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runDir) })
	boardA, boardB := filepath.Join(root, "a", "board"), filepath.Join(root, "b", "board")
	envA, envB := pgEnv(t, bin, boardA, runDir), pgEnv(t, bin, boardB, runDir)
	run := func(e []string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "pickup"), args...)
		cmd.Env, cmd.Dir = e, root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pickup %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(envA, "init", "--shared", url)
	run(envB, "init", "--shared", url)
	first := strings.TrimSpace(run(envA, "new", "--title", "made in a"))
	second := strings.TrimSpace(run(envB, "new", "--title", "made in b"))

	// The fallback poll is set long: only the database's waiter can show
	// a transition in time.
	tm := newTerm(t, append(envA, "PICKUP_PG_POLL=10m"), 120, 30, "pickup board; echo BOARD-EXITED; sleep 60")
	tm.waitFor("the first screen", 15*time.Second, func(s string) bool {
		return strings.Contains(s, "2 todo") && strings.Contains(s, "made in b")
	})

	// A claim in clone b: its owner appears in a's board, holding it.
	out := run(envB, "--owner", "bob", "claim", second)
	if !strings.Contains(out, "claimed "+second) {
		t.Fatalf("claim in b: %s", out)
	}
	holds := regexp.MustCompile(`(?m)^\s+bob\s+\S+\s+.*\n\s+└ ` + regexp.QuoteMeta(second))
	took := tm.waitFor("bob's claim made in clone b", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "1 todo  1 doing") && holds.MatchString(s)
	})
	t.Logf("a claim in clone b showed in a's board after %v", took.Round(time.Millisecond))
	// bob works from another board: its machine is the one its claim's
	// heartbeat came from.
	host, _ := os.Hostname()
	if row := regexp.MustCompile(`(?m)^\s+bob\s.*$`).FindString(tm.screen()); host != "" && len(host) < 16 && !strings.Contains(row, " "+host+" ") {
		t.Errorf("bob's row does not name its machine %s: %q", host, row)
	}

	// The history here tells it too (the mirror logs what other boards
	// did).
	tm.waitFor("bob's claim in a's history", 5*time.Second, func(s string) bool {
		return regexp.MustCompile(`claim\s+` + regexp.QuoteMeta(second) + `\s+todo → doing/bob`).MatchString(s)
	})

	// Done in clone b: the session moves on a's board.
	run(envB, "--owner", "bob", "done", second)
	took = tm.waitFor("bob's done made in clone b", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "1 todo  0 doing  1 done") && !holds.MatchString(s)
	})
	t.Logf("a done in clone b showed in a's board after %v", took.Round(time.Millisecond))

	// The database stops: the status line says so, the last view stays.
	if err := srv.Stop("fast"); err != nil {
		t.Fatal(err)
	}
	tm.waitFor("the database unreachable", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "database unreachable since") && strings.Contains(s, "1 todo  0 doing  1 done") &&
			strings.Contains(s, "made in a")
	})

	// It answers again: the line goes, and what moves shows again.
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	tm.waitFor("the database answering again", 10*time.Second, func(s string) bool {
		return !strings.Contains(s, "database unreachable") && !strings.Contains(s, "view may be stale")
	})
	run(envB, "--owner", "carol", "claim", first)
	took = tm.waitFor("carol's claim after the restart", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "0 todo  1 doing  1 done") &&
			regexp.MustCompile(`(?m)^\s+carol\s+.*\n\s+└ `+regexp.QuoteMeta(first)).MatchString(s)
	})
	t.Logf("a claim in clone b after the restart showed in a's board after %v", took.Round(time.Millisecond))
	if s := tm.screen(); strings.Contains(s, "BOARD-EXITED") {
		t.Fatalf("the board exited:\n%s", s)
	}
	// What an idle PostgreSQL board costs (its fallback reads of the
	// database), for the report: no assertion on a shared machine.
	boardPID := childNamed(t, tm.panePID(), "pickup-board")
	time.Sleep(time.Second)
	before := cpuTicks(t, boardPID)
	time.Sleep(5 * time.Second)
	t.Logf("the idle board used %d clock ticks of CPU in 5 s", cpuTicks(t, boardPID)-before)
}
