package claim_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
)

// TestTidy: only the lease of an owner that is dead and holds nothing is
// removed; a live owner's and a dead owner's that still holds a session
// stay (the latter is reap's business: its sessions must come back first).
func TestTidy(t *testing.T) {
	dead := deadProcess(t)
	tests := []struct {
		name     string
		holder   proc.Process
		sessions int
		removed  bool
	}{
		{name: "dead, holds nothing", holder: dead, removed: true},
		{name: "dead, holds a session", holder: dead, sessions: 1},
		{name: "alive, holds nothing", holder: proc.Self()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := leaseBoard(t)
			claimNew(t, b, "w", tt.sessions)
			leases := &claim.Leases{Board: b}
			if _, err := leases.Heartbeat("w", claim.Holder(tt.holder)); err != nil {
				t.Fatal(err)
			}
			removed, err := leases.Tidy("w")
			if err != nil || removed != tt.removed {
				t.Fatalf("Tidy = %v, %v; want %v", removed, err, tt.removed)
			}
			_, err = leases.Get("w")
			if gone := errors.Is(err, fs.ErrNotExist); gone != tt.removed {
				t.Errorf("lease gone: %v, want %v (%v)", gone, tt.removed, err)
			}
			if list, _ := b.ListOwner("w"); len(list) != tt.sessions {
				t.Errorf("the owner holds %d session(s) after Tidy, want %d", len(list), tt.sessions)
			}
		})
	}
}
