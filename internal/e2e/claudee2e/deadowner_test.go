package claudee2e

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killRuns is how many times the dead-owner tests kill and time: 1 by
// default, PICKUP_E2E_KILL_RUNS=10 to measure.
func killRuns(t *testing.T) int {
	if n, err := strconv.Atoi(os.Getenv("PICKUP_E2E_KILL_RUNS")); err == nil && n > 0 {
		return n
	}
	return 1
}

// rescanBound: a waiter that claims a killed owner's session sooner than
// this learned of the death from the owner's process, not from its
// periodic rescan (claim.DefaultRescan, 5 s).
const rescanBound = 2500 * time.Millisecond

// waiter is `pickup next --wait --json` running as owner.
type waiter struct {
	cmd *exec.Cmd
	got chan string
}

func (p *project) startWaiter(owner string) *waiter {
	p.t.Helper()
	cmd := exec.Command(pickupBinary(p.t), "--owner", owner, "next", "--wait=90s", "--json")
	cmd.Dir, cmd.Env = p.root, p.env
	out, err := cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	w := &waiter{cmd: cmd, got: make(chan string, 1)}
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		_, _ = io.Copy(io.Discard, out)
		w.got <- line
	}()
	p.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return w
}

// claimedWithin waits for the waiter's claim and returns how long after
// since it came.
func (w *waiter) claimedWithin(t *testing.T, since time.Time, id string) time.Duration {
	t.Helper()
	select {
	case line := <-w.got:
		d := time.Since(since)
		if !strings.Contains(line, `"id":"`+id+`"`) {
			t.Fatalf("the waiter printed %q, want the claim of %s", line, id)
		}
		_ = w.cmd.Wait()
		return d
	case <-time.After(turnTimeout):
		t.Fatalf("the waiter did not claim %s within %v", id, turnTimeout)
	}
	return 0
}

// waitAsleep gives a waiter time to find nothing and go to sleep.
func waitAsleep() { time.Sleep(700 * time.Millisecond) }

// TestKillNineReachesWaiter: SIGKILL of a Claude Code session that holds
// a session hands it to a waiting `pickup next --wait` at once: the waiter
// watches the owner's process (a pidfd), not only its 5 s rescan. Also
// with a plain process as the owner. Each kill is timed (t.Log); set
// PICKUP_E2E_KILL_RUNS=10 to measure.
func TestKillNineReachesWaiter(t *testing.T) {
	t.Parallel()
	claudeBinary(t)
	p := newProject(t, projectFiles)
	runs := killRuns(t)
	var claudeTimes, plainTimes []time.Duration
	for i := 0; i < runs; i++ {
		id := p.seed("Held by a Claude Code session that is killed")[0]
		api := newStubAPI(t, "victim", step{Bash: "pickup claim " + id}, claimed(stop))
		a := p.startClaude("victim", api, claudeOpts{})
		a.prompt(p.pickupSkill + " " + id)
		p.requireHeld(id, a.ID(), "after /pickup")
		w := p.startWaiter("waiter")
		waitAsleep()
		killed := time.Now()
		_ = syscall.Kill(a.Pid(), syscall.SIGKILL)
		d := w.claimedWithin(t, killed, id)
		a.wait("SIGKILL")
		claudeTimes = append(claudeTimes, d)
		if d >= rescanBound {
			t.Fatalf("run %d: the waiter claimed the killed Claude Code's session %v after SIGKILL: at a rescan, not at the death", i+1, d)
		}

		id = p.seed("Held by a plain process that is killed")[0]
		holder := exec.Command("sleep", "120")
		if err := holder.Start(); err != nil {
			t.Fatal(err)
		}
		p.pickupOK("plain", "--pid", strconv.Itoa(holder.Process.Pid), "claim", id)
		w = p.startWaiter("waiter")
		waitAsleep()
		killed = time.Now()
		_ = holder.Process.Kill()
		d = w.claimedWithin(t, killed, id)
		_ = holder.Wait()
		plainTimes = append(plainTimes, d)
		if d >= rescanBound {
			t.Fatalf("run %d: the waiter claimed the killed process's session %v after SIGKILL: at a rescan, not at the death", i+1, d)
		}
	}
	t.Logf("SIGKILL -> waiter's claim, Claude Code holder: %v", claudeTimes)
	t.Logf("SIGKILL -> waiter's claim, plain process holder: %v", plainTimes)
}
