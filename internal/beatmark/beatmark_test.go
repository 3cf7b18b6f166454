package beatmark

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDue: a hook sends an owner's heartbeat only when this board's last
// one is older than the interval (or never happened).
func TestDue(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	every := 7 * time.Minute
	if !Due(dir, "shared-beats", "o", every, now) {
		t.Fatal("never pushed: not due")
	}
	mark := Path(dir, "shared-beats", "o")
	if err := os.MkdirAll(filepath.Dir(mark), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		age  time.Duration
		due  bool
	}{
		{"just pushed", time.Second, false},
		{"within the interval", every - time.Second, false},
		{"past the interval", every + time.Second, true},
		{"in the future (clock set back)", -time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := now.Add(-tc.age)
			if err := os.Chtimes(mark, at, at); err != nil {
				t.Fatal(err)
			}
			if got := Due(dir, "shared-beats", "o", every, now); got != tc.due {
				t.Fatalf("due = %v, want %v", got, tc.due)
			}
		})
	}
	if !Due(dir, "shared-beats", "other", every, now) {
		t.Fatal("another owner's push made this one's not due")
	}
}
