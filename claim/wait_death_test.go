package claim_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// TestWaitWakesAtOwnersDeath: a waiter learns of the death of an owner
// whose process it can see the moment it happens (Linux: a pidfd per
// watched process), reaps it and claims its session: nothing else can wake
// it, the rescan being an hour away and no file changing before the kill.
// An owner with two processes is dead only when both are: the first exit
// wakes the waiter, which finds the owner alive and goes back to sleep.
func TestWaitWakesAtOwnersDeath(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("owners' processes are watched on Linux; elsewhere the rescan finds their death")
	}
	b, err := sessions.Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	b.NoSync = true
	s, err := b.Create(sessions.Meta{Title: "held by a process that dies"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := func() (*exec.Cmd, proc.Process) {
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		p, err := proc.Lookup(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		return cmd, p
	}
	first, p1 := start()
	second, p2 := start()
	leases := &claim.Leases{Board: b}
	if _, err := leases.Heartbeat("agent", claim.Holder(p1), claim.Holder(p2)); err != nil {
		t.Fatal(err)
	}
	holder, err := claim.New(b, "agent")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Claim(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}

	waiter, err := claim.New(b, "waiter")
	if err != nil {
		t.Fatal(err)
	}
	spy := &waSpy{asleep: make(chan struct{}, 1)}
	notify := func(dirs ...string) (claim.Notifier, error) {
		n, err := claim.NewFSWatcher(dirs...)
		spy.Notifier = n
		return spy, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := waStart(ctx, waiter.NewQueue(claim.NextOptions{}), claim.WaitOptionsWith(waNever, notify))
	waAsleep(t, spy.asleep, res)

	// One of its two processes exits: the owner lives on.
	_ = first.Process.Kill()
	_ = first.Wait()
	waAsleep(t, spy.asleep, res)
	if got := pkWhere(t, b, s.ID); got != "doing/agent" {
		t.Fatalf("after one of the owner's two processes exited, %s is in %s, want doing/agent", s.ID, got)
	}

	// The other is killed (and left a zombie, as a killed agent whose
	// parent has not waited for it yet): the waiter gets it at once.
	killed := time.Now()
	_ = second.Process.Kill()
	select {
	case r := <-res:
		waClaimed(t, b, r, "waiter", s.ID)
		t.Logf("claimed %v after the kill", time.Since(killed))
	case <-time.After(waPatience):
		t.Fatalf("the waiter did not claim %s within %v of its owner's death (it waits for a rescan an hour away)", s.ID, waPatience)
	}
}
