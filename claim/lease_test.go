package claim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sync/errgroup"
)

func leaseBoard(t *testing.T) *sessions.Board {
	t.Helper()
	b, err := sessions.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b.NoSync = true
	return b
}

// deadProcess returns the identity of a process that has exited.
func deadProcess(t *testing.T) proc.Process {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p, err := proc.Lookup(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	return p
}

func claimNew(t *testing.T, b *sessions.Board, owner string, n int) []string {
	t.Helper()
	c, err := claim.New(b, owner)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < n; i++ {
		s, err := b.Create(sessions.Meta{Title: fmt.Sprint(i)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Claim(context.Background(), s.ID); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	return ids
}

func TestJudge(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	self := proc.Self()
	elsewhere := proc.Process{Host: "another-host", PID: 4242, Start: 1}
	otherNS := self
	otherNS.PidNS++ // the same numbers, counted in a sandbox
	dead := deadProcess(t)
	tests := []struct {
		name      string
		holders   []proc.Process
		none      bool // no lease at all
		heartbeat time.Duration
		heard     time.Duration // 0: not heard from elsewhere
		claimAge  time.Duration // with none: the claim's age
		want      claim.OwnerState
	}{
		{name: "own process alive, silent for days", holders: []proc.Process{self}, heartbeat: 72 * time.Hour, want: claim.OwnerAlive},
		{name: "process exited", holders: []proc.Process{dead}, want: claim.OwnerDead},
		{name: "pid reused", holders: []proc.Process{{Host: self.Host, PidNS: self.PidNS, PID: self.PID, Start: self.Start + 1, BootID: self.BootID}}, want: claim.OwnerDead},
		{name: "rebooted since", holders: []proc.Process{{Host: self.Host, PidNS: self.PidNS, PID: self.PID, Start: self.Start, BootID: "another-boot"}}, want: claim.OwnerDead},
		{name: "one holder exited, another runs", holders: []proc.Process{dead, self}, heartbeat: 72 * time.Hour, want: claim.OwnerAlive},
		{name: "every holder exited", holders: []proc.Process{dead, deadProcess(t)}, want: claim.OwnerDead},
		{name: "exited, and one in another pid namespace", holders: []proc.Process{dead, otherNS}, heartbeat: time.Minute, want: claim.OwnerUnknown},
		{name: "another pid namespace, silent", holders: []proc.Process{otherNS}, heartbeat: 31 * time.Minute, want: claim.OwnerStale},
		{name: "another pid namespace, recent heartbeat", holders: []proc.Process{otherNS}, heartbeat: time.Minute, want: claim.OwnerUnknown},
		{name: "other host, recent heartbeat", holders: []proc.Process{elsewhere}, heartbeat: time.Minute, want: claim.OwnerUnknown},
		{name: "other host, silent", holders: []proc.Process{elsewhere}, heartbeat: 31 * time.Minute, want: claim.OwnerStale},
		{name: "no process recorded, silent", heartbeat: 31 * time.Minute, want: claim.OwnerStale},
		{name: "no lease, recent claim", none: true, want: claim.OwnerUnknown},
		// Heard from elsewhere (boardhook.SetLastHeard: a heartbeat
		// in a PostgreSQL board's database): the newer of it and the
		// lease's heartbeat counts; processes here still decide first.
		{name: "other host, silent lease, heard recently", holders: []proc.Process{elsewhere}, heartbeat: 31 * time.Minute, heard: time.Minute, want: claim.OwnerUnknown},
		{name: "other host, silent lease, heard long ago", holders: []proc.Process{elsewhere}, heartbeat: 31 * time.Minute, heard: 40 * time.Minute, want: claim.OwnerStale},
		{name: "other host, recent lease, heard long ago", holders: []proc.Process{elsewhere}, heartbeat: time.Minute, heard: 40 * time.Minute, want: claim.OwnerUnknown},
		{name: "process exited, heard recently", holders: []proc.Process{dead}, heard: time.Second, want: claim.OwnerDead},
		{name: "own process alive, heard long ago", holders: []proc.Process{self}, heartbeat: 72 * time.Hour, heard: 72 * time.Hour, want: claim.OwnerAlive},
		{name: "no lease, old claim, heard recently", none: true, claimAge: 31 * time.Minute, heard: time.Minute, want: claim.OwnerUnknown},
		{name: "no lease, old claim, heard long ago", none: true, claimAge: 31 * time.Minute, heard: 40 * time.Minute, want: claim.OwnerStale},
		{name: "no lease, recent claim, heard long ago", none: true, heard: 40 * time.Minute, want: claim.OwnerUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := leaseBoard(t)
			claimNew(t, b, "o", 1)
			l := &claim.Leases{Board: b, Now: func() time.Time { return now }}
			if !tt.none {
				write := &claim.Leases{Board: b, Now: func() time.Time { return now.Add(-tt.heartbeat) }}
				if _, err := write.Heartbeat("o", holdersOf(tt.holders)...); err != nil {
					t.Fatal(err)
				}
			} else {
				// The claim's age is its file's ctime: judge from
				// that far after it.
				claimed := time.Now()
				l.Now = func() time.Time { return claimed.Add(tt.claimAge) }
			}
			if tt.heard > 0 {
				boardhook.SetLastHeard(b, func(owner string) (time.Time, bool) {
					if owner != "o" {
						return time.Time{}, false
					}
					return l.Now().Add(-tt.heard), true
				})
			}
			got, _, reason := l.Judge("o", 0)
			if got != tt.want {
				t.Errorf("Judge = %s (%s), want %s", got, reason, tt.want)
			}
		})
	}
}

// TestJudgeLeaseOfEarlierVersion: a lease written before holders existed
// names one process without its pid namespace; nothing proves it dead, so
// it is never reaped at once.
func TestJudgeLeaseOfEarlierVersion(t *testing.T) {
	b := leaseBoard(t)
	claimNew(t, b, "o", 1)
	dead := deadProcess(t)
	old := fmt.Sprintf(`{"owner":"o","process":{"host":%q,"pid":%d,"start":%d,"boot_id":%q},"created_at":"2026-11-22T12:00:00Z","heartbeat_at":%q}`,
		dead.Host, dead.PID, dead.Start, dead.BootID, time.Now().UTC().Format(time.RFC3339))
	if err := os.MkdirAll(filepath.Join(b.RuntimeDir(), "leases"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.RuntimeDir(), "leases", "o.json"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &claim.Leases{Board: b}
	if st, lease, reason := l.Judge("o", 0); st != claim.OwnerUnknown || len(lease.Holders) != 1 {
		t.Errorf("Judge = %s (%s), %+v; want unknown, with the old process as its holder", st, reason, lease)
	}
}

func TestReapFencesTheReapedOwner(t *testing.T) {
	b := leaseBoard(t)
	ids := claimNew(t, b, "a", 1)
	x := ids[0]
	l := &claim.Leases{Board: b}
	if _, err := l.Heartbeat("a", claim.Holder(deadProcess(t))); err != nil {
		t.Fatal(err)
	}
	reaped, err := l.Reap(claim.ReapOptions{})
	if err != nil || len(reaped) != 1 || reaped[0].ID != x || reaped[0].State != claim.OwnerDead {
		t.Fatalf("Reap = %+v, %v; want %s reaped from a dead owner", reaped, err, x)
	}
	bc, _ := claim.New(b, "b")
	if _, err := bc.Claim(context.Background(), x); err != nil {
		t.Fatalf("b claim after reap: %v", err)
	}
	ac, _ := claim.New(b, "a")
	for name, op := range map[string]func(context.Context, string) (sessions.Session, error){"done": ac.Done, "release": ac.Release} {
		if _, err := op(context.Background(), x); !errors.Is(err, claim.ErrClaimLost) {
			t.Errorf("a %s after reap = %v, want ErrClaimLost", name, err)
		}
	}
	if err := ac.Holds(x); !errors.Is(err, claim.ErrClaimLost) {
		t.Errorf("a Holds after reap = %v, want ErrClaimLost", err)
	}
	if _, err := os.Stat(b.Path(sessions.Doing, "b", x)); err != nil {
		t.Fatalf("a's failed done moved b's session: %v", err)
	}
	if _, err := bc.Done(context.Background(), x); err != nil {
		t.Fatalf("b done: %v", err)
	}
	if _, err := l.Get("a"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dead owner's lease still there: %v", err)
	}
}

func TestReapLeavesLiveAndRecentOwners(t *testing.T) {
	b := leaseBoard(t)
	claimNew(t, b, "alive", 2)
	claimNew(t, b, "remote", 2)
	l := &claim.Leases{Board: b}
	if _, err := l.Heartbeat("alive", claim.Holder(proc.Self())); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Heartbeat("remote", claim.Holder{Host: "elsewhere", PID: 7}); err != nil {
		t.Fatal(err)
	}
	reaped, err := l.Reap(claim.ReapOptions{Stale: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reaped {
		if r.Owner == "alive" {
			t.Errorf("reaped %s from an owner whose process is alive here", r.ID)
		}
	}
	if len(reaped) != 2 {
		t.Errorf("reaped %d sessions, want the remote owner's 2 (stale after 1ns)", len(reaped))
	}
}

func TestConcurrentReapersReturnEachSessionOnce(t *testing.T) {
	b := leaseBoard(t)
	const n, reapers = 500, 4
	ids := claimNew(t, b, "gone", n)
	if _, err := (&claim.Leases{Board: b}).Heartbeat("gone", claim.Holder(deadProcess(t))); err != nil {
		t.Fatal(err)
	}
	var total atomic.Int64
	counts := make([]map[string]int, reapers)
	var g errgroup.Group
	for i := 0; i < reapers; i++ {
		g.Go(func() error {
			reaped, err := (&claim.Leases{Board: b}).Reap(claim.ReapOptions{})
			counts[i] = map[string]int{}
			for _, r := range reaped {
				if r.Err != "" {
					return fmt.Errorf("reaper %d: %s: %s", i, r.ID, r.Err)
				}
				counts[i][r.ID]++
			}
			total.Add(int64(len(reaped)))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if total.Load() != n {
		t.Errorf("reapers returned %d sessions in all, want %d (each exactly once)", total.Load(), n)
	}
	for _, id := range ids {
		seen := 0
		for _, c := range counts {
			seen += c[id]
		}
		if seen != 1 {
			t.Errorf("%s reaped %d times", id, seen)
		}
		if _, err := os.Stat(b.Path(sessions.Todo, "", id)); err != nil {
			t.Errorf("%s not back in todo: %v", id, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(b.Dir, "doing", "gone", "*.md")); len(left) != 0 {
		t.Errorf("%d sessions left with the dead owner", len(left))
	}
}

func TestNextHealsDeadOwners(t *testing.T) {
	b := leaseBoard(t)
	ids := claimNew(t, b, "crashed", 1)
	if _, err := (&claim.Leases{Board: b}).Heartbeat("crashed", claim.Holder(deadProcess(t))); err != nil {
		t.Fatal(err)
	}
	c, _ := claim.New(b, "fresh")
	s, err := c.Next(t.Context())
	if err != nil {
		t.Fatalf("Next: %v (the dead owner's session should have come back)", err)
	}
	if s.ID != ids[0] || s.Owner != "fresh" {
		t.Errorf("Next = %s by %s, want %s by fresh", s.ID, s.Owner, ids[0])
	}
}

func TestStaleOwnerWithoutLease(t *testing.T) {
	b := leaseBoard(t)
	claimNew(t, b, "old", 1)
	l := &claim.Leases{Board: b, Now: func() time.Time { return time.Now().Add(time.Hour) }}
	if st, _, reason := l.Judge("old", 30*time.Minute); st != claim.OwnerStale {
		t.Errorf("Judge = %s (%s), want stale: no lease, last claim an hour ago", st, reason)
	}
}
