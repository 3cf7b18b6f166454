package claude

import (
	"github.com/pickup-dev/pickup/claim"
	"os"
	"path/filepath"
	"testing"

	"github.com/pickup-dev/pickup/sessions"
)

// With keep_on_session_end, /clear hands what the cleared session kept to
// the session that goes on in the same Claude Code process, whichever of
// SessionEnd (reason clear) and SessionStart (source clear) Claude Code
// runs first; without it, SessionEnd released them and there is nothing
// to hand over.
func TestHookClearHandsOverKeptClaims(t *testing.T) {
	for _, tt := range []struct {
		name     string
		keep     bool
		endFirst bool
	}{
		{"keep, end first", true, true},
		{"keep, start first", true, false},
		{"release", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.keep {
				if err := os.WriteFile(filepath.Join(f.board.Dir, sessions.ConfigFile), []byte("keep_on_session_end: true\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			id := f.newSession("Long one")
			f.mustHook("session-start", sessA, map[string]any{"source": "startup"})
			f.claim(sessA, id)
			if tt.endFirst {
				f.mustHook("session-end", sessA, map[string]any{"reason": "clear"})
				f.mustHook("session-start", sessB, map[string]any{"source": "clear"})
			} else {
				f.mustHook("session-start", sessB, map[string]any{"source": "clear"})
				f.mustHook("session-end", sessA, map[string]any{"reason": "clear"})
			}
			if !tt.keep {
				if !f.inTodo(id) || len(f.held(sessB)) != 0 {
					t.Fatalf("without keep_on_session_end: %s in todo %v, new session holds %v; want it released", id, f.inTodo(id), f.held(sessB))
				}
				return
			}
			if got := f.held(sessB); len(got) != 1 || got[0] != id {
				t.Fatalf("after /clear the new session holds %v, want [%s] (the old one holds %v)", got, id, f.held(sessA))
			}
			if got := f.held(sessA); len(got) != 0 {
				t.Fatalf("after /clear the cleared session still holds %v", got)
			}
			if _, ok := f.lease(sessA); ok {
				t.Errorf("the cleared session's lease is still there")
			}
			if l, ok := f.lease(sessB); !ok || len(l.Holders) != 1 || !l.Holders[0].Same(claim.Holder(f.process())) {
				t.Errorf("the new session's lease %+v does not follow the Claude Code process", l)
			}
			if owner, ok := f.owner(); !ok || owner != sessB {
				t.Errorf("the process's record names %q, want %s", owner, sessB)
			}
		})
	}
}
