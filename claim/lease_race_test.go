package claim_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// liveProcess starts a process that runs until the test ends.
func liveProcess(t *testing.T) (proc.Process, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command("sleep", "120")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p, err := proc.Lookup(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return p, cmd
}

// TestRegisterNeverWeakens: an owner working from a long-lived and a
// short-lived process stays alive when the short-lived one exits; only when
// both are gone is it dead.
func TestRegisterNeverWeakens(t *testing.T) {
	b := leaseBoard(t)
	claimNew(t, b, "o", 1)
	l := &claim.Leases{Board: b}
	long, longCmd := liveProcess(t)
	short, shortCmd := liveProcess(t)
	if _, err := l.Heartbeat("o", claim.Holder(long)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Heartbeat("o", claim.Holder(short)); err != nil { // a later call, from elsewhere
		t.Fatal(err)
	}
	_ = shortCmd.Process.Kill()
	_ = shortCmd.Wait()
	if st, _, reason := l.Judge("o", 0); st != claim.OwnerAlive {
		t.Fatalf("after the short-lived holder exited: %s (%s), want alive", st, reason)
	}
	lease, err := l.Heartbeat("o") // a heartbeat prunes what provably exited
	if err != nil || len(lease.Holders) != 1 || !lease.Holders[0].Same(claim.Holder(long)) {
		t.Fatalf("after a heartbeat: %+v, %v; want only the long-lived holder", lease.Holders, err)
	}
	if reaped, err := l.Reap(claim.ReapOptions{}); err != nil || len(reaped) != 0 {
		t.Fatalf("Reap = %+v, %v; want nothing: the owner is alive", reaped, err)
	}
	_ = longCmd.Process.Kill()
	_ = longCmd.Wait()
	if st, _, reason := l.Judge("o", 0); st != claim.OwnerDead {
		t.Fatalf("after every holder exited: %s (%s), want dead", st, reason)
	}
}

// TestReapRechecksUnderTheGuard: a reaper judges an owner dead; before it
// moves anything, a new process of the same owner registers and claims. The
// fresh claim must never be reaped.
func TestReapRechecksUnderTheGuard(t *testing.T) {
	b := leaseBoard(t)
	old := claimNew(t, b, "o", 1)[0]
	l := &claim.Leases{Board: b}
	if _, err := l.Heartbeat("o", claim.Holder(deadProcess(t))); err != nil {
		t.Fatal(err)
	}
	fresh, err := b.Create(sessions.Meta{Title: "fresh"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	live, _ := liveProcess(t)
	oc, _ := claim.New(b, "o")
	claim.SetReapHook(l, func(point, owner, _ string) {
		if point != "judged" || owner != "o" {
			return
		}
		// The window between the reaper's judgement and its moves.
		if _, err := (&claim.Leases{Board: b}).Ensure("o", time.Minute, claim.ReapOptions{}, claim.Holder(live)); err != nil {
			t.Error(err)
		}
		if _, err := oc.Claim(context.Background(), fresh.ID); err != nil {
			t.Error(err)
		}
	})
	reaped, err := l.Reap(claim.ReapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reaped {
		if r.ID == fresh.ID {
			t.Errorf("reaped %s, claimed by a live process of the owner after the reaper's first look", fresh.ID)
		}
	}
	if _, err := os.Stat(b.Path(sessions.Doing, "o", fresh.ID)); err != nil {
		t.Errorf("fresh claim no longer with its owner: %v", err)
	}
	// The dead run's session: Ensure took it up (back to todo/) before
	// registering the new process.
	if _, err := os.Stat(b.Path(sessions.Todo, "", old)); err != nil {
		t.Errorf("the dead run's session %s is not back in todo: %v", old, err)
	}
}

// TestReapClaimRaceProcesses runs the same race many times for real: a
// reaper and a new process of a dead owner's name, concurrently.
func TestReapClaimRaceProcesses(t *testing.T) {
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	for i := 0; i < rounds; i++ {
		b := leaseBoard(t)
		claimNew(t, b, "o", 2)
		if _, err := (&claim.Leases{Board: b}).Heartbeat("o", claim.Holder(deadProcess(t))); err != nil {
			t.Fatal(err)
		}
		fresh, err := b.Create(sessions.Meta{Title: "fresh"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		live, _ := liveProcess(t)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := (&claim.Leases{Board: b}).Reap(claim.ReapOptions{}); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := (&claim.Leases{Board: b}).Ensure("o", time.Minute, claim.ReapOptions{}, claim.Holder(live)); err != nil {
				t.Error(err)
			}
			oc, _ := claim.New(b, "o")
			if _, err := oc.Claim(context.Background(), fresh.ID); err != nil {
				t.Error(err)
			}
		}()
		wg.Wait()
		if _, err := os.Stat(b.Path(sessions.Doing, "o", fresh.ID)); err != nil {
			t.Fatalf("round %d: the live process's fresh claim was taken: %v", i, err)
		}
	}
}

// TestReapFencesASessionMovedMeanwhile: the fence is recorded before the
// move, so the dead owner's done is told it lost (exit 6), not that the
// session is elsewhere (exit 3), whoever moved it.
func TestReapFencesASessionMovedMeanwhile(t *testing.T) {
	b := leaseBoard(t)
	x := claimNew(t, b, "a", 1)[0]
	l := &claim.Leases{Board: b}
	if _, err := l.Heartbeat("a", claim.Holder(deadProcess(t))); err != nil {
		t.Fatal(err)
	}
	claim.SetReapHook(l, func(point, owner, id string) {
		if point != "fenced" {
			return
		}
		// Between the fence and the move, the session leaves (a racing
		// release) and another owner takes it.
		if err := os.Rename(b.Path(sessions.Doing, "a", id), b.Path(sessions.Todo, "", id)); err != nil {
			t.Error(err)
		}
		bc, _ := claim.New(b, "b")
		if _, err := bc.Claim(context.Background(), id); err != nil {
			t.Error(err)
		}
	})
	if _, err := l.Reap(claim.ReapOptions{}); err != nil {
		t.Fatal(err)
	}
	ac, _ := claim.New(b, "a")
	if _, err := ac.Done(context.Background(), x); !errors.Is(err, claim.ErrClaimLost) {
		t.Errorf("dead owner's done = %v, want ErrClaimLost", err)
	}
}

// TestReapsCountAsAttempts: a session whose agent dies every time is set
// aside in failed/ after max_attempts reaps, each reason in its history.
func TestReapsCountAsAttempts(t *testing.T) {
	for _, tt := range []struct {
		name   string
		config string
		want   int
	}{
		{"default", "", claim.DefaultMaxAttempts},
		{"board setting", "max_attempts: 2\n", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := leaseBoard(t)
			if tt.config != "" {
				if err := os.WriteFile(b.Dir+"/config.yaml", []byte(tt.config), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := b.Create(sessions.Meta{Title: "crashes its agent"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for attempt := 1; attempt <= tt.want; attempt++ {
				c, _ := claim.New(b, "agent")
				if _, err := c.Claim(context.Background(), s.ID); err != nil {
					t.Fatalf("attempt %d: claim: %v", attempt, err)
				}
				l := &claim.Leases{Board: b}
				if _, err := l.Heartbeat("agent", claim.Holder(deadProcess(t))); err != nil { // the agent crashed
					t.Fatal(err)
				}
				reaped, err := l.Reap(claim.ReapOptions{})
				if err != nil || len(reaped) != 1 || reaped[0].Attempt != attempt || reaped[0].SetAside != (attempt == tt.want) {
					t.Fatalf("attempt %d: Reap = %+v, %v", attempt, reaped, err)
				}
			}
			got, content, err := b.Read(sessions.Place{State: sessions.Failed, Path: b.Path(sessions.Failed, "", s.ID)})
			if err != nil {
				t.Fatalf("not set aside in failed/: %v", err)
			}
			if got.Attempts != tt.want || !strings.Contains(string(content), "last_error: \"reaped from agent: ") {
				t.Errorf("set aside with attempts %d and content\n%s\nwant attempts %d and the reap's reason as last_error", got.Attempts, content, tt.want)
			}
			events, _, err := b.Events(s.ID)
			if err != nil {
				t.Fatal(err)
			}
			reaps := 0
			for _, e := range events {
				if e.Op == "reap" {
					reaps++
					if !strings.Contains(e.Reason, "exited") {
						t.Errorf("reap event without its reason: %+v", e)
					}
				}
			}
			if reaps != tt.want {
				t.Errorf("%d reap events in the history, want %d", reaps, tt.want)
			}
		})
	}
}
