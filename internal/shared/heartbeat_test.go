package shared

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBeatDue: a hook pushes an owner's heartbeat only when this clone's
// last push of it is older than the interval (or never happened).
func TestBeatDue(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	every := 7 * time.Minute
	if !BeatDue(dir, "o", every, now) {
		t.Fatal("never pushed: not due")
	}
	mark := beatMark(dir, "o")
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
			if got := BeatDue(dir, "o", every, now); got != tc.due {
				t.Fatalf("due = %v, want %v", got, tc.due)
			}
		})
	}
	if !BeatDue(dir, "other", every, now) {
		t.Fatal("another owner's push made this one's not due")
	}
}

func TestPeerHosts(t *testing.T) {
	seen := map[string]peerSeen{"ann": {Commit: "a1"}, "bob": {Commit: "b1"}, "cat": {Commit: "c1"}, "dan": {Commit: "d1"}}
	out := strings.Join([]string{
		"a1\x00pickup: heartbeat ann 2026-11-27T10:00:00Z on build-7",
		"b1\x00pickup: heartbeat bob 2026-11-27T10:00:00Z",              // an older pickup: no host
		"c1\x00pickup: heartbeat eve 2026-11-27T10:00:00Z on elsewhere", // not cat's own
		"",
	}, "\n")
	got := peerHosts(seen, out) // dan's commit is gone: no line
	if len(got) != 1 || got["ann"] != "build-7" {
		t.Errorf("peerHosts = %v, want only ann on build-7", got)
	}
}
