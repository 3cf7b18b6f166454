package claude

import (
	"github.com/pickup-dev/pickup/claim"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// SessionStart runs again at /clear and /compact: a lease that holds the
// Claude Code process and heartbeated within BeatEvery is left as it is,
// not rewritten; an older one is renewed, and a new Claude Code process of
// the session (a resume) is added at once.
func TestHookSessionStartRenewsOnlyWhenDue(t *testing.T) {
	f := newFixture(t)
	f.mustHook("session-start", sessA, map[string]any{"source": "startup"})
	path := filepath.Join(f.board.RuntimeDir(), "leases", sessA+".json")
	stat := func() os.FileInfo {
		t.Helper()
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	first := stat()

	f.now = f.now.Add(BeatEvery - time.Second)
	f.mustHook("session-start", sessA, map[string]any{"source": "compact"})
	if !os.SameFile(first, stat()) {
		t.Error("session-start rewrote a lease that held the process and heartbeated within BeatEvery")
	}

	f.now = f.now.Add(time.Second)
	f.mustHook("session-start", sessA, map[string]any{"source": "clear"})
	if os.SameFile(first, stat()) {
		t.Error("session-start left a lease whose heartbeat is BeatEvery old")
	}
	if l, ok := f.lease(sessA); !ok || !l.Heartbeat.Equal(f.now) {
		t.Errorf("lease heartbeat %v, want %v", l.Heartbeat, f.now)
	}

	renewed := stat()
	f.startClaude()
	f.mustHook("session-start", sessA, map[string]any{"source": "resume"})
	if os.SameFile(renewed, stat()) {
		t.Error("session-start did not add the session's new Claude Code process to a fresh lease")
	}
	l, _ := f.lease(sessA)
	held := false
	for _, h := range l.Holders {
		held = held || h.Same(claim.Holder(f.process()))
	}
	if !held {
		t.Errorf("lease holders %+v lack the new Claude Code process", l.Holders)
	}
}
