package claim_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/cli"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sync/errgroup"
)

// envKillSessions overrides how many sessions TestKilledMovesHistory drains
// (500 by default, what CI runs).
const envKillSessions = "PICKUP_TEST_KILL_SESSIONS"

// TestKilledMovesHistory: 8 loops of real pickup processes drain 500
// sessions with next and done, durable (fsync), while about every other
// process is SIGKILLed at a random moment of its run. Some die between a
// rename and its line in events.log, so the history misses moves. doctor
// reports exactly those sessions, doctor --fix records every missed move,
// and then `pickup log ID` of every session ends where the session is.
func TestKilledMovesHistory(t *testing.T) {
	n := 500
	if s := os.Getenv(envKillSessions); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("%s=%q: want a number of sessions", envKillSessions, s)
		}
		n = v
	}
	const loops = 8
	exe := pickupBinary(t)
	b := pkBoard(t)
	ids := pkSeed(t, b, n)
	news := make([]sessions.Event, len(ids))
	for i, id := range ids {
		news[i] = sessions.Event{Op: "new", ID: id, Dst: b.Path(sessions.Todo, "", id)}
	}
	if err := b.OpenEventLog().Record(news...); err != nil {
		t.Fatal(err)
	}

	k := &killer{seed: uint64(time.Now().UnixNano())}
	start := time.Now()
	var g errgroup.Group
	for w := range loops {
		owner := fmt.Sprintf("w%d", w)
		rng := rand.New(rand.NewPCG(k.seed, uint64(w)))
		g.Go(func() error { return killLoop(exe, b, owner, rng, k) })
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d loops drained %d sessions in %v: %d pickup runs, %d SIGKILLed (seed %d)",
		loops, n, time.Since(start).Round(time.Millisecond), k.runs, k.kills, k.seed)

	places := pkPlaces(t, b)
	if len(places) != n {
		t.Fatalf("the board holds %d sessions, want %d", len(places), n)
	}
	gaps := pkGaps(t, b)
	if len(gaps) == 0 {
		t.Fatal("no kill landed between a move and its log line: nothing was tested (run again, or with more sessions)")
	}
	findings, err := b.Check(false)
	if err != nil {
		t.Fatal(err)
	}
	if got := pkDoctorHistory(findings); !slices.Equal(got, gaps) {
		t.Errorf("doctor reports the history of %v as incomplete, want %v", got, gaps)
	}

	cmd := pickupCmd(exe, "--dir", b.Dir, "doctor", "--fix")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pickup doctor --fix: %v\n%s", err, out)
	}
	if out, err := pickupCmd(exe, "--dir", b.Dir, "doctor").CombinedOutput(); err != nil {
		t.Fatalf("pickup doctor after --fix: %v\n%s", err, out)
	}
	checkLogsEndInPlace(t, exe, b, pkPlaces(t, b))
	t.Logf("%d sessions' histories missed a move; doctor --fix recorded them", len(gaps))
}

// killer decides which pickup runs to kill, and when: about every other
// run, at a random moment within the typical length of an unkilled run.
type killer struct {
	seed uint64

	mu          sync.Mutex
	runs, kills int
	typical     time.Duration // moving average of unkilled runs
}

func (k *killer) delay(rng *rand.Rand) (time.Duration, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.runs++
	if rng.IntN(2) == 0 {
		return 0, false
	}
	typ := k.typical
	if typ == 0 {
		typ = 10 * time.Millisecond
	}
	return time.Duration(rng.Int64N(int64(typ) + 1)), true
}

func (k *killer) ran(d time.Duration, killed bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if killed {
		k.kills++
	} else if k.typical == 0 {
		k.typical = d
	} else {
		k.typical = (7*k.typical + d) / 8
	}
}

// run runs pickup with args, perhaps killing it; it returns the standard
// output, the exit code and whether the SIGKILL ended it.
func (k *killer) run(exe string, rng *rand.Rand, args ...string) ([]byte, int, bool, error) {
	cmd := pickupCmd(exe, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, false, err
	}
	if d, ok := k.delay(rng); ok {
		t := time.AfterFunc(d, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
		defer t.Stop()
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			k.ran(0, true)
			return nil, 0, true, nil
		}
		k.ran(time.Since(start), false)
		code := exit.ExitCode()
		if code != cli.ExitNotAvailable && code != cli.ExitNotFound {
			return nil, code, false, fmt.Errorf("pickup %v: exit %d: %s", args, code, stderr.String())
		}
		return stdout.Bytes(), code, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	k.ran(time.Since(start), false)
	return stdout.Bytes(), 0, false, nil
}

// killLoop is one loop: finish (done) whatever this owner holds, which a
// killed next may have claimed without saying so, then take the next
// session, until nothing is left.
func killLoop(exe string, b *sessions.Board, owner string, rng *rand.Rand, k *killer) error {
	base := []string{"--dir", b.Dir, "--owner", owner}
	for {
		held, err := os.ReadDir(b.StateDir(sessions.Doing, owner))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		for _, e := range held {
			id, _ := sessions.IsSessionName(e.Name())
			if _, _, _, err := k.run(exe, rng, append(base, "done", id)...); err != nil {
				return err
			}
		}
		if len(held) > 0 {
			continue
		}
		_, code, killed, err := k.run(exe, rng, append(base, "next", "--json")...)
		if err != nil {
			return err
		}
		if !killed && code == cli.ExitNotAvailable {
			return nil // todo/ is empty, and this owner holds nothing
		}
	}
}

// checkLogsEndInPlace runs `pickup log --json ID` for every session and
// checks that its last event puts it where it is.
func checkLogsEndInPlace(t *testing.T, exe string, b *sessions.Board, places map[string]string) {
	t.Helper()
	ids := make(chan string)
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for id := range ids {
				if err := logEndsIn(exe, b, id, places[id]); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for id := range places {
		ids <- id
	}
	close(ids)
	wg.Wait()
	for i, err := range errs {
		if i == 10 {
			t.Errorf("... and %d more", len(errs)-i)
			break
		}
		t.Error(err)
	}
}

// logEndsIn checks that `pickup log ID` ends with a move to place.
func logEndsIn(exe string, b *sessions.Board, id, place string) error {
	out, err := pickupCmd(exe, "--dir", b.Dir, "log", "--json", id).Output()
	if err != nil {
		return fmt.Errorf("pickup log %s: %v", id, err)
	}
	var events []sessions.Event
	if err := json.Unmarshal(out, &events); err != nil {
		return fmt.Errorf("pickup log %s: %v: %s", id, err, out)
	}
	if len(events) == 0 {
		return fmt.Errorf("pickup log %s: no history, but the session is in %s", id, place)
	}
	last := events[len(events)-1]
	if last.To != place {
		return fmt.Errorf("pickup log %s ends with %s to %s, but the session is in %s", id, last.Op, last.To, place)
	}
	if last.Op == "doctor" && last.Reason == "" {
		return fmt.Errorf("pickup log %s: doctor's line gives no reason", id)
	}
	return nil
}
