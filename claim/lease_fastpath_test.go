package claim_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
)

// Renew leaves a lease that already holds the process and heartbeated
// within the period as it is (the same file), and renews it otherwise.
func TestRenew(t *testing.T) {
	self := proc.Self()
	other := deadProcess(t)
	tests := []struct {
		name    string
		age     time.Duration // since the lease's heartbeat
		holder  proc.Process
		rewrite bool
	}{
		{"fresh, holds it", 10 * time.Second, self, false},
		{"heartbeat as old as the period", time.Minute, self, true},
		{"fresh, another process", 10 * time.Second, other, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := leaseBoard(t)
			now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
			l := &claim.Leases{Board: b, Now: func() time.Time { return now }}
			if _, err := l.Heartbeat("alice", claim.Holder(self)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(b.RuntimeDir(), "leases", "alice.json")
			before, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			now = now.Add(tt.age)
			got, err := l.Renew("alice", time.Minute, claim.Holder(tt.holder))
			if err != nil {
				t.Fatal(err)
			}
			after, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if rewritten := !os.SameFile(before, after); rewritten != tt.rewrite {
				t.Errorf("lease file replaced: %v, want %v", rewritten, tt.rewrite)
			}
			stored, err := l.Get("alice")
			if err != nil {
				t.Fatal(err)
			}
			if !got.Heartbeat.Equal(stored.Heartbeat) || len(got.Holders) != len(stored.Holders) {
				t.Errorf("Renew returned %+v, the lease stored is %+v", got, stored)
			}
			if want := now; tt.rewrite && !stored.Heartbeat.Equal(want) {
				t.Errorf("heartbeat %v after a renewal, want %v", stored.Heartbeat, want)
			}
			held := false
			for _, h := range stored.Holders {
				held = held || h.Same(claim.Holder(tt.holder))
			}
			if tt.holder == self && !held {
				t.Errorf("the lease does not hold %v after Renew", tt.holder)
			}
		})
	}
	t.Run("no lease", func(t *testing.T) {
		b := leaseBoard(t)
		l := &claim.Leases{Board: b}
		if _, err := l.Renew("bob", time.Minute, claim.Holder(self)); err != nil {
			t.Fatal(err)
		}
		if lease, err := l.Get("bob"); err != nil || len(lease.Holders) != 1 || !lease.Holders[0].Same(claim.Holder(self)) {
			t.Errorf("after Renew without a lease: %+v, %v", lease, err)
		}
	})
}

// Remove deletes the lease and its guard; with neither there it creates
// nothing (no guard file made only to be deleted).
func TestRemove(t *testing.T) {
	b := leaseBoard(t)
	l := &claim.Leases{Board: b}
	dir := filepath.Join(b.RuntimeDir(), "leases")
	lease, guard := filepath.Join(dir, "alice.json"), filepath.Join(dir, "alice.lock")
	gone := func(paths ...string) {
		t.Helper()
		for _, p := range paths {
			if _, err := os.Lstat(p); !os.IsNotExist(err) {
				t.Errorf("%s is there after Remove (%v)", filepath.Base(p), err)
			}
		}
	}
	if _, err := l.Heartbeat("alice", claim.Holder(proc.Self())); err != nil {
		t.Fatal(err)
	}
	if err := l.Remove("alice"); err != nil {
		t.Fatal(err)
	}
	gone(lease, guard)

	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Remove("alice"); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(dir); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("Remove of no lease changed the leases directory (%v)", err)
	}

	// A guard left alone (an interrupted Register) goes too.
	if err := os.WriteFile(guard, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.Remove("alice"); err != nil {
		t.Fatal(err)
	}
	gone(lease, guard)
}
