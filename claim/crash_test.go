package claim_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sync/errgroup"
)

// Environment of a crash worker (see TestMain).
const (
	envLoopDir   = "PICKUP_TEST_LOOP_DIR"
	envLoopOwner = "PICKUP_TEST_LOOP_OWNER"
	envLoopSeed  = "PICKUP_TEST_LOOP_SEED"
)

// crashMeta and crashBody are what "new" workers create: every session
// file they publish must be exactly Render(crashMeta, crashBody).
var (
	crashMeta = sessions.Meta{Priority: sessions.High, Title: "made by a worker that will be killed", Tags: []string{"crash"},
		CreatedAt: time.Date(2026, 4, 5, 6, 7, 8, 0, time.UTC)}
	crashBody = bytes.Repeat([]byte("a line of body text, long enough to take more than one write\n"), 300)
)

// crashWorker runs until killed, printing one line per completed step, each
// in one write(2) so that a kill never splits a line:
//
//	new:  "created ID" after each b.Create
//	work: "claimed ID" after each Next, then "done ID" or "released ID"
//
// It prints "ready" first. It exits 1 (with the reason on stderr) only if
// a step fails in a way it never should.
func crashWorker(mode string) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "crash worker %s: "+format+"\n", append([]any{mode}, args...)...)
		return 1
	}
	b, err := sessions.Open(os.Getenv(envLoopDir))
	if err != nil {
		return fail("%v", err)
	}
	seed, _ := strconv.ParseUint(os.Getenv(envLoopSeed), 10, 64)
	rng := rand.New(rand.NewPCG(seed, 1))
	say := func(line string) { os.Stdout.WriteString(line + "\n") }
	switch mode {
	case "new":
		say("ready")
		for {
			s, err := b.Create(crashMeta, crashBody)
			if err != nil {
				return fail("create: %v", err)
			}
			say("created " + s.ID)
		}
	case "work":
		b.NoSync = true
		c, err := claim.New(b, os.Getenv(envLoopOwner))
		if err != nil {
			return fail("%v", err)
		}
		say("ready")
		for {
			s, err := c.Next(context.Background())
			if errors.Is(err, claim.ErrNothingAvailable) {
				say("empty")
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil {
				return fail("next: %v", err)
			}
			say("claimed " + s.ID)
			time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond) // the work
			if rng.IntN(2) == 0 {
				if _, err := c.Done(context.Background(), s.ID); err != nil {
					return fail("done %s: %v", s.ID, err)
				}
				say("done " + s.ID)
			} else {
				if _, err := c.Release(context.Background(), s.ID); err != nil {
					return fail("release %s: %v", s.ID, err)
				}
				say("released " + s.ID)
			}
		}
	}
	return fail("unknown mode")
}

// runAndKill starts a crash worker, waits until it is ready and has reported
// afterSteps completed steps, lets it work for delay more, SIGKILLs it and
// returns the complete lines it printed after "ready".
func runAndKill(exe, mode, dir, owner string, seed uint64, afterSteps int, delay time.Duration) ([]string, error) {
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envLoop+"="+mode, envLoopDir+"="+dir, envLoopOwner+"="+owner,
		envLoopSeed+"="+strconv.FormatUint(seed, 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// A worker that stops making progress (prints no line for 2 minutes)
	// must not hang the test.
	watchdog := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer watchdog.Stop()
	r := bufio.NewReader(out)
	var lines []string
	ready, killed := false, false
	for {
		line, err := r.ReadString('\n')
		watchdog.Reset(2 * time.Minute) // counted from the worker's last line
		if err != nil {
			if err != io.EOF {
				return nil, err
			}
			break // a fragment without '\n' is not a completed step
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case !ready && line != "ready":
			cmd.Process.Kill()
			cmd.Wait()
			return nil, fmt.Errorf("worker said %q before ready", line)
		case !ready:
			ready = true
		default:
			lines = append(lines, line)
		}
		if !killed && len(lines) == afterSteps {
			time.Sleep(delay)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				return nil, err
			}
			killed = true
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !killed || !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		return lines, fmt.Errorf("worker %s ended with %v before it was killed: %s", owner, err, stderr.String())
	}
	return lines, nil
}

// TestCrashMidTransition SIGKILLs workers in the middle of create, claim,
// done and release loops, many times, and checks that no session is lost
// or duplicated and no partial file is ever listed.
func TestCrashMidTransition(t *testing.T) {
	tests := []struct {
		name    string
		mode    string
		rounds  int
		workers int // killed together, each at its own moment
		seed    int // sessions on the board beforehand
	}{
		{name: "create", mode: "new", rounds: 30, workers: 1},
		{name: "claim, done and release", mode: "work", rounds: 15, workers: 2, seed: 400},
	}
	exe := pkSelf(t)
	for ti, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			ids := pkSeed(t, b, tt.seed)
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(ti)))
			logs := map[string][]string{} // owner -> lines
			start := time.Now()
			for r := 0; r < tt.rounds; r++ {
				var g errgroup.Group
				got := make([][]string, tt.workers)
				for w := 0; w < tt.workers; w++ {
					owner := fmt.Sprintf("w%02d-%d", r, w)
					// Kill at once or after a step or two, then within 10 ms.
					seed, after, delay := rng.Uint64(), rng.IntN(3), time.Duration(rng.IntN(10000))*time.Microsecond
					g.Go(func() error {
						lines, err := runAndKill(exe, tt.mode, b.Dir, owner, seed, after, delay)
						if err != nil {
							return fmt.Errorf("round %d: %w", r, err)
						}
						got[w] = lines
						return nil
					})
				}
				if err := g.Wait(); err != nil {
					t.Fatal(err)
				}
				for w, lines := range got {
					logs[fmt.Sprintf("w%02d-%d", r, w)] = lines
				}
			}
			steps := 0
			for _, l := range logs {
				steps += len(l)
			}
			t.Logf("%d kills, %d completed steps, in %v", tt.rounds*tt.workers, steps, time.Since(start).Round(time.Millisecond))
			if tt.mode == "new" {
				checkAfterCreateCrashes(t, b, logs, tt.rounds*tt.workers)
			} else {
				checkAfterWorkCrashes(t, b, ids, logs)
			}
			checkDoctor(t, b)
		})
	}
}

func checkAfterCreateCrashes(t *testing.T, b *sessions.Board, logs map[string][]string, kills int) {
	t.Helper()
	created := map[string]bool{}
	for owner, lines := range logs {
		for _, l := range lines {
			id, ok := strings.CutPrefix(l, "created ")
			if !ok {
				t.Fatalf("%s printed %q", owner, l)
			}
			if created[id] {
				t.Errorf("id %s was created twice", id)
			}
			created[id] = true
		}
	}
	if len(created) == 0 {
		t.Error("no worker reported creating a session before it was killed: nothing was tested")
	}
	w, err := pkWalk(b)
	if err != nil {
		t.Fatal(err)
	}
	for id := range created {
		if p := w[id]; len(p) != 1 || p[0] != "todo" {
			t.Errorf("created session %s is at %v, want [todo]", id, p)
		}
	}
	// A killed worker may have published one session it did not report.
	if extra := len(w) - len(created); extra < 0 || extra > kills {
		t.Errorf("%d sessions on the board for %d reported creations and %d kills", len(w), len(created), kills)
	}
	list, err := b.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(w) {
		t.Errorf("List returned %d sessions, the board holds %d names", len(list), len(w))
	}
	want := sessions.Render(crashMeta, crashBody)
	for _, s := range list {
		if s.Problem != "" {
			t.Errorf("%s listed with a problem: %s", s.ID, s.Problem)
		}
		if got, err := os.ReadFile(s.Path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes (err %v), want the complete %d-byte file", s.ID, len(got), err, len(want))
		}
	}
	entries, err := os.ReadDir(b.StateDir(sessions.Todo, ""))
	if err != nil {
		t.Fatal(err)
	}
	temps := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			temps++
		}
	}
	t.Logf("%d sessions created (%d reported), %d temporary files left by killed writes", len(w), len(created), temps)
}

func checkAfterWorkCrashes(t *testing.T, b *sessions.Board, ids []string, logs map[string][]string) {
	t.Helper()
	reportedDone := map[string]string{}
	everClaimed := map[string]bool{}
	held := map[string]string{} // owner -> what its log says it still holds
	for owner, lines := range logs {
		for _, l := range lines {
			verb, id, _ := strings.Cut(l, " ")
			switch verb {
			case "claimed":
				if held[owner] != "" {
					t.Errorf("%s claimed %s while holding %s", owner, id, held[owner])
				}
				held[owner] = id
				everClaimed[id] = true
			case "done", "released":
				if held[owner] != id {
					t.Errorf("%s: %s %s but its log says it held %q", owner, verb, id, held[owner])
				}
				held[owner] = ""
				if verb == "done" {
					reportedDone[id] = owner
				}
			case "empty":
			default:
				t.Fatalf("%s printed %q", owner, l)
			}
		}
	}
	if len(everClaimed) == 0 {
		t.Error("no worker reported a claim before it was killed: nothing was tested")
	}
	w, err := pkWalk(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != len(ids) {
		t.Errorf("the board holds %d names, want the %d seeded sessions", len(w), len(ids))
	}
	doing := map[string][]string{}
	for _, id := range ids {
		p := w[id]
		if len(p) != 1 {
			t.Errorf("session %s is at %v, want exactly one place", id, p)
			continue
		}
		st, owner, _ := strings.Cut(p[0], "/")
		got, err := os.ReadFile(b.Path(sessions.State(st), owner, id))
		if err != nil || !bytes.Equal(got, pkContent(id, pkSeedMeta(id))) {
			t.Errorf("session %s changed (err %v)", id, err)
		}
		switch {
		case st == "doing":
			doing[owner] = append(doing[owner], id)
		case st == "done" && !everClaimed[id]:
			t.Errorf("session %s is done but no worker reported claiming it", id)
		}
		if by, ok := reportedDone[id]; ok && st != "done" {
			t.Errorf("session %s reported done by %s is at %s", id, by, p[0])
		}
	}
	for owner, list := range doing {
		if len(list) > 1 || held[owner] != "" && list[0] != held[owner] {
			t.Errorf("doing/%s holds %v, but its log says it held %q (one claim at a time)", owner, list, held[owner])
		}
	}
	t.Logf("%d claimed at least once, %d done, %d left in doing/ by killed workers", len(everClaimed), len(reportedDone), len(doing))
}

// pkSeedMeta is the metadata pkSeed gives session id.
func pkSeedMeta(id string) sessions.Meta {
	i, _ := strconv.Atoi(strings.TrimPrefix(id, "s"))
	prio := []sessions.Priority{sessions.High, sessions.Medium, sessions.Low}[i%3]
	return sessions.Meta{Priority: prio, CreatedAt: time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC).Add(time.Duration(i%97) * time.Second)}
}

// checkDoctor: Check finds nothing but young temporary files and what it
// can mend: hardlinks, if the link+unlink fallback was interrupted, and
// moves the history missed, if a worker died between a rename and its line.
func checkDoctor(t *testing.T, b *sessions.Board) {
	t.Helper()
	findings, err := b.Check(false)
	if err != nil {
		t.Fatal(err)
	}
	repairable := 0
	for _, f := range findings {
		switch f.Kind {
		case "tempfile":
		case "hardlink", "history":
			repairable++
		default:
			t.Errorf("doctor: %s %s: %s", f.Kind, f.Path, f.Message)
		}
	}
	if repairable == 0 {
		return
	}
	if _, err := b.Check(true); err != nil {
		t.Fatal(err)
	}
	again, err := b.Check(false)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range again {
		if f.Kind != "tempfile" {
			t.Errorf("after repair: %s %s: %s", f.Kind, f.Path, f.Message)
		}
	}
	if gaps := pkGaps(t, b); len(gaps) != 0 {
		t.Errorf("after repair the history of %v does not end where the session is", gaps)
	}
}
