package claude

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// stopHook runs the Stop hook for session and returns the reason of its
// block, "" if it let the session stop.
func (f *fixture) stopHook(session string, active bool) string {
	f.t.Helper()
	if err := f.hooks().Run("stop", strings.NewReader(f.hookJSON("Stop", session, map[string]any{"stop_hook_active": active}))); err != nil {
		f.t.Fatalf("hook stop: %v", err)
	}
	out := strings.TrimSpace(f.stdout.String())
	if out == "" {
		return ""
	}
	var d struct{ Decision, Reason string }
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Decision != "block" || d.Reason == "" {
		f.t.Fatalf("hook stop printed %q, want {\"decision\":\"block\",\"reason\":...} or nothing (%v)", out, err)
	}
	return d.Reason
}

func (f *fixture) autoNext(on bool) {
	f.t.Helper()
	content := "auto_next: false\n"
	if on {
		content = "auto_next: true\n"
	}
	if err := os.WriteFile(filepath.Join(f.board.Dir, sessions.ConfigFile), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) newPrio(title string, prio sessions.Priority, tags ...string) string {
	f.t.Helper()
	s, err := f.board.Create(sessions.Meta{Title: title, Priority: prio, Tags: tags}, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return s.ID
}

func (f *fixture) finish(owner, id string) {
	f.t.Helper()
	c, err := claim.New(f.board, owner)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := c.Done(context.Background(), id); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) release(owner, id string) {
	f.t.Helper()
	c, err := claim.New(f.board, owner)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := c.Release(context.Background(), id); err != nil {
		f.t.Fatal(err)
	}
}

// TestHookStopFeeds: with auto_next a session that stops holding nothing
// is given the next session by priority, claimed for it, and told so; it
// is fed again only after finishing what it was fed, never while it holds
// one, and it stops when nothing is left.
func TestHookStopFeeds(t *testing.T) {
	f := newFixture(t)
	low := f.newPrio("Low", sessions.Low)
	high := f.newPrio("High", sessions.High)

	if r := f.stopHook(sessA, false); r != "" {
		t.Fatalf("without auto_next the Stop hook blocked: %q", r)
	}
	if len(f.held(sessA)) != 0 {
		t.Fatalf("without auto_next the Stop hook claimed %v", f.held(sessA))
	}

	f.autoNext(true)
	r := f.stopHook(sessA, false)
	if !strings.Contains(r, high+" [high] High") || !strings.Contains(r, "pickup done "+high) {
		t.Fatalf("the Stop hook's reason %q does not name %s, the best session, and how to finish it", r, high)
	}
	if got := f.held(sessA); len(got) != 1 || got[0] != high {
		t.Fatalf("after the Stop hook %s holds %v, want [%s]", sessA, got, high)
	}
	if l, ok := f.lease(sessA); !ok || len(l.Holders) != 1 || !l.Holders[0].Same(claim.Holder(f.process())) {
		t.Fatalf("the fed session's lease %+v does not follow the Claude Code process", l)
	}

	// It stops again still holding it, after its continuation or after a
	// person's turn: no second session, it stops.
	for _, active := range []bool{true, false} {
		if r := f.stopHook(sessA, active); r != "" {
			t.Fatalf("a session that holds one was fed another (stop_hook_active %v): %q", active, r)
		}
	}
	if got := f.held(sessA); len(got) != 1 {
		t.Fatalf("%s holds %v, want only %s", sessA, got, high)
	}

	// Finished: fed the next.
	f.finish(sessA, high)
	if r := f.stopHook(sessA, true); !strings.Contains(r, low) {
		t.Fatalf("after finishing %s the Stop hook said %q, want %s", high, r, low)
	}
	// Released instead of finished: not fed again (it would take the
	// same one back, forever).
	f.release(sessA, low)
	if r := f.stopHook(sessA, true); r != "" {
		t.Fatalf("a session that released what it was fed was fed again: %q", r)
	}
	// A person's turn (stop_hook_active false) starts over.
	if r := f.stopHook(sessA, false); !strings.Contains(r, low) {
		t.Fatalf("after a person's turn the Stop hook said %q, want %s", r, low)
	}
	f.finish(sessA, low)
	// Nothing left: it stops.
	if r := f.stopHook(sessA, true); r != "" {
		t.Fatalf("with nothing left the Stop hook blocked: %q", r)
	}
}

// TestHookStopOptInOut: $PICKUP_AUTO_NEXT opts one session in (1) or out
// (0) whatever the board says; $PICKUP_TAG limits what it is fed; a Claude
// Code session under pickup work is never fed.
func TestHookStopOptInOut(t *testing.T) {
	tests := []struct {
		name   string
		config bool
		env    map[string]string
		want   string // the title fed; "" none
	}{
		{name: "board off", config: false, want: ""},
		{name: "board on", config: true, want: "High"},
		{name: "board on, session out", config: true, env: map[string]string{AutoNextEnv: "0"}, want: ""},
		{name: "board off, session in", config: false, env: map[string]string{AutoNextEnv: "1"}, want: "High"},
		{name: "tags", config: true, env: map[string]string{"PICKUP_TAG": "docs"}, want: "Docs"},
		{name: "not-tags", config: true, env: map[string]string{"PICKUP_NOT_TAG": "docs,big"}, want: "Plain"},
		{name: "under work", config: true, env: map[string]string{"PICKUP_SESSION_ID": "x", "PICKUP_OWNER": "pool"}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.newPrio("High", sessions.High, "big")
			f.newPrio("Docs", sessions.Medium, "docs")
			f.newPrio("Plain", sessions.Low)
			f.autoNext(tt.config)
			for k, v := range tt.env {
				f.env[k] = v
			}
			if tt.env["PICKUP_OWNER"] != "" {
				f.env["PICKUP_DIR"] = f.board.Dir
				work := f.newPrio("Given", sessions.Low)
				f.env["PICKUP_SESSION_ID"] = work
				f.claim("pool", work)
			}
			r := f.stopHook(sessA, false)
			held := f.held(sessA)
			if tt.want == "" {
				if r != "" || len(held) != 0 {
					t.Fatalf("fed %v (%q), want nothing", held, r)
				}
				return
			}
			if len(held) != 1 || !strings.Contains(r, "] "+tt.want+" (file:") {
				t.Fatalf("fed %v (%q), want %q", held, r, tt.want)
			}
		})
	}
}
