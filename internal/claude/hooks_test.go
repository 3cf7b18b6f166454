package claude

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

func TestHookSessionStartRegistersTheClaudeProcess(t *testing.T) {
	f := newFixture(t)
	f.newSession("Waiting one")
	envFile := filepath.Join(t.TempDir(), "sessionstart-hook-0.sh")
	f.env["CLAUDE_ENV_FILE"] = envFile
	f.mustHook("session-start", sessA, map[string]any{"source": "startup"})

	l, ok := f.lease(sessA)
	if !ok {
		t.Fatal("no lease after session-start")
	}
	if len(l.Holders) != 1 || l.Holders[0].PID != f.claude.Process.Pid || l.Holders[0].Start == 0 {
		t.Errorf("lease holders = %+v, want the Claude process %d with its start time", l.Holders, f.claude.Process.Pid)
	}
	out := f.stdout.String()
	for _, want := range []string{"owner " + sessA, "do not pass --owner", "holds no sessions; 1 wait in todo/"} {
		if !strings.Contains(out, want) {
			t.Errorf("session-start printed %q, want it to contain %q", out, want)
		}
	}
	if f.stderr.Len() > 0 {
		t.Errorf("stderr: %q", f.stderr.String())
	}
	// The Bash tool gets the session id, once however often the hook runs.
	f.mustHook("session-start", sessA, map[string]any{"source": "compact"})
	data, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), "export CLAUDE_SESSION_ID="+sessA+"\n"; got != want {
		t.Errorf("CLAUDE_ENV_FILE holds %q, want %q", got, want)
	}
}

func TestHookSessionStartPrintsClaims(t *testing.T) {
	f := newFixture(t)
	id := f.newSession("Fix the parser")
	other := f.newSession("Someone else's")
	f.claim(sessA, id)
	f.claim(sessB, other)
	f.mustHook("session-start", sessA, map[string]any{"source": "resume"})
	out := f.stdout.String()
	if !strings.Contains(out, "holds 1 session(s)") || !strings.Contains(out, id+" [medium] Fix the parser") ||
		!strings.Contains(out, f.board.Path(sessions.Doing, sessA, id)) {
		t.Errorf("session-start printed %q, want the claim %s with its file", out, id)
	}
	if strings.Contains(out, other) {
		t.Errorf("session-start printed another session's claim: %q", out)
	}
}

// The owner is the session_id on stdin, whatever the environment says:
// under `pickup work -- claude ...` $PICKUP_OWNER names the worker.
func TestHookOwnerIsTheSessionID(t *testing.T) {
	f := newFixture(t)
	f.env["PICKUP_OWNER"] = "worker-1"
	f.env["CLAUDE_SESSION_ID"] = "somebody-else"
	id := f.newSession("Worker's")
	f.claim("worker-1", id)
	f.mustHook("session-start", sessA, nil)
	if _, ok := f.lease(sessA); !ok {
		t.Error("no lease for the session id")
	}
	if _, ok := f.lease("worker-1"); ok {
		t.Error("session-start registered $PICKUP_OWNER")
	}
	f.mustHook("session-end", sessA, map[string]any{"reason": "other"})
	if got := f.held("worker-1"); len(got) != 1 {
		t.Errorf("session-end released the worker's claim: it holds %v", got)
	}
}

func TestHookSessionEndReleases(t *testing.T) {
	f := newFixture(t)
	ids := []string{f.newSession("One"), f.newSession("Two")}
	f.mustHook("session-start", sessA, map[string]any{"source": "startup"})
	for _, id := range ids {
		f.claim(sessA, id)
	}
	f.mustHook("post-tool-use", sessA, map[string]any{"tool_name": "Bash"})
	f.mustHook("session-end", sessA, map[string]any{"reason": "prompt_input_exit"})
	for _, id := range ids {
		if !f.inTodo(id) {
			t.Errorf("%s is not back in todo/", id)
		}
	}
	if got := f.held(sessA); len(got) != 0 {
		t.Errorf("still held: %v", got)
	}
	if _, ok := f.lease(sessA); ok {
		t.Error("the lease outlived session-end")
	}
	for _, p := range []string{beatPath(f.board.Dir, sessA), PidPath(f.board.Dir, f.claude.Process.Pid)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s outlived session-end", p)
		}
	}
	if !strings.Contains(f.stdout.String(), "released "+ids[0]) {
		t.Errorf("session-end printed %q", f.stdout.String())
	}
}

// /clear ends one session and starts another in the same process: the new
// session's record of the process must survive the old one's end, in
// either order.
func TestHookClearKeepsTheNewSessionsRecord(t *testing.T) {
	f := newFixture(t)
	f.mustHook("session-start", sessA, map[string]any{"source": "startup"})
	f.mustHook("session-start", sessB, map[string]any{"source": "clear"})
	f.mustHook("session-end", sessA, map[string]any{"reason": "clear"})
	rec, ok := ReadRecord(PidPath(f.board.Dir, f.claude.Process.Pid))
	if !ok || rec.Owner != sessB {
		t.Errorf("pid record = %+v, %v; want owner %s", rec, ok, sessB)
	}
	if owner, ok := f.owner(); !ok || owner != sessB {
		t.Errorf("owner = %q, %v; want %s", owner, ok, sessB)
	}
}

func TestHookSessionEndKeepsWithConfig(t *testing.T) {
	f := newFixture(t)
	if err := os.WriteFile(filepath.Join(f.board.Dir, sessions.ConfigFile), []byte("keep_on_session_end: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := f.newSession("Long one")
	f.mustHook("session-start", sessA, nil)
	f.claim(sessA, id)
	f.mustHook("session-end", sessA, map[string]any{"reason": "logout"})
	f.stopClaude()
	if got := f.held(sessA); len(got) != 1 || got[0] != id {
		t.Fatalf("after session-end with keep_on_session_end it holds %v, want [%s]", got, id)
	}
	l, ok := f.lease(sessA)
	if !ok || len(l.Holders) != 0 {
		t.Fatalf("kept lease = %+v, %v; want one without a process", l, ok)
	}
	// The Claude process is gone, yet another agent's next does not take
	// the kept session: the lease no longer follows that process.
	other, _ := claim.New(f.board, sessB)
	if s, err := other.Next(context.Background()); !errors.Is(err, claim.ErrNothingAvailable) {
		t.Errorf("another agent's next = %v, %v; want nothing available", s.ID, err)
	}
	// The session resumes in a new process: its claims are its own again,
	// and follow the new process.
	f.startClaude()
	f.mustHook("session-start", sessA, map[string]any{"source": "resume"})
	if !strings.Contains(f.stdout.String(), id) {
		t.Errorf("resumed session-start printed %q, want the kept claim %s", f.stdout.String(), id)
	}
	if l, _ := f.lease(sessA); len(l.Holders) != 1 || l.Holders[0].PID != f.claude.Process.Pid {
		t.Errorf("resumed lease follows %+v, want pid %d", l.Holders, f.claude.Process.Pid)
	}
	// Never resumed: reap returns it after the stale period.
	f.mustHook("session-end", sessA, map[string]any{"reason": "other"})
	f.stopClaude()
	f.now = f.now.Add(claim.DefaultStale + time.Minute)
	reaped, err := f.leases().Reap(claim.ReapOptions{})
	if err != nil || len(reaped) != 1 || reaped[0].ID != id {
		t.Errorf("reap after the stale period = %+v, %v; want %s", reaped, err, id)
	}
}

// A Claude Code that crashes runs no SessionEnd: its claims come back at
// once, because the lease followed its process.
func TestHookLeaseFollowsTheClaudeProcess(t *testing.T) {
	f := newFixture(t)
	id := f.newSession("Crashy")
	f.mustHook("session-start", sessA, nil)
	f.claim(sessA, id)
	f.stopClaude()
	other, _ := claim.New(f.board, sessB)
	s, err := other.Next(context.Background())
	if err != nil || s.ID != id {
		t.Fatalf("next after the Claude process died = %q, %v; want %s", s.ID, err, id)
	}
}

// SessionStart forgets the records of Claude Code processes that ended
// without a SessionEnd; a crashed session's lease stays while it holds
// claims, for next to find them.
func TestHookSessionStartPrunesCrashedSessions(t *testing.T) {
	f := newFixture(t)
	id := f.newSession("Held by the crashed one")
	f.mustHook("session-start", sessA, nil)
	f.claim(sessA, id)
	crashedA := f.claude.Process.Pid
	f.stopClaude()
	f.startClaude()
	const sessC = "c0ffee00-0000-4000-8000-000000000000"
	f.mustHook("session-start", sessC, nil)
	crashedC := f.claude.Process.Pid
	f.stopClaude()

	f.startClaude()
	f.mustHook("session-start", sessB, nil)
	for _, pid := range []int{crashedA, crashedC} {
		if _, err := os.Stat(PidPath(f.board.Dir, pid)); err == nil {
			t.Errorf("the record of crashed pid %d survived", pid)
		}
	}
	if _, ok := f.lease(sessC); ok {
		t.Error("the lease of a crashed session that held nothing survived")
	}
	if _, ok := f.lease(sessA); !ok {
		t.Error("the lease of a crashed session with claims is gone: next can no longer see it is dead")
	}
	if _, err := os.Stat(PidPath(f.board.Dir, f.claude.Process.Pid)); err != nil {
		t.Errorf("the running session's record: %v", err)
	}
}

func TestHookPostToolUseThrottles(t *testing.T) {
	f := newFixture(t)
	f.mustHook("session-start", sessA, nil)
	start, _ := f.lease(sessA)

	f.now = f.now.Add(30 * time.Second)
	f.mustHook("post-tool-use", sessA, map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "/x"}})
	if l, _ := f.lease(sessA); !l.Heartbeat.Equal(start.Heartbeat) {
		t.Errorf("heartbeat moved %v after 30 s; want it throttled", l.Heartbeat.Sub(start.Heartbeat))
	}
	f.now = f.now.Add(BeatEvery)
	f.mustHook("post-tool-use", sessA, map[string]any{"tool_name": "Bash"})
	l, _ := f.lease(sessA)
	if !l.Heartbeat.Equal(f.now) {
		t.Errorf("heartbeat = %v after %v; want %v", l.Heartbeat, BeatEvery, f.now)
	}
	if !l.Created.Equal(start.Created) {
		t.Errorf("a heartbeat changed the lease's creation time")
	}
	if f.stdout.Len()+f.stderr.Len() > 0 {
		t.Errorf("post-tool-use printed %q / %q; it must be silent", f.stdout.String(), f.stderr.String())
	}
}

// Without a SessionStart (hooks installed mid-session), the first
// PostToolUse registers the lease.
func TestHookPostToolUseRegistersAMissingLease(t *testing.T) {
	f := newFixture(t)
	f.mustHook("post-tool-use", sessA, map[string]any{"tool_name": "Edit"})
	l, ok := f.lease(sessA)
	if !ok || len(l.Holders) != 1 || l.Holders[0].PID != f.claude.Process.Pid {
		t.Errorf("lease = %+v, %v; want the Claude process", l, ok)
	}
}

// A tool response may be megabytes; session_id and cwd come first.
func TestHookLargeInput(t *testing.T) {
	f := newFixture(t)
	big := strings.Repeat("x", 3*maxHookInput)
	f.mustHook("post-tool-use", sessA, map[string]any{"tool_name": "Read", "tool_response": map[string]any{"content": big}})
	if _, ok := f.lease(sessA); !ok {
		t.Error("no lease")
	}
}

func TestHookWithoutBoardDoesNothing(t *testing.T) {
	f := newFixture(t)
	if err := os.RemoveAll(f.board.Dir); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"session-start", "post-tool-use", "session-end"} {
		f.mustHook(ev, sessA, nil)
		if f.stdout.Len()+f.stderr.Len() > 0 {
			t.Errorf("%s without a board printed %q / %q", ev, f.stdout.String(), f.stderr.String())
		}
	}
	if _, err := os.Stat(f.board.Dir); err == nil {
		t.Error("a hook created the board")
	}
}

// BenchmarkHookPostToolUseThrottled is the in-process share of the hook
// that runs after every tool use: read the input, find the board, one stat.
func BenchmarkHookPostToolUseThrottled(b *testing.B) {
	f := newFixture(b)
	f.mustHook("session-start", sessA, nil)
	input := f.hookJSON("PostToolUse", sessA, map[string]any{"tool_name": "Edit", "tool_input": map[string]any{"file_path": "/r/x.go", "old_string": "a", "new_string": "b"}})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := f.hooks().Run("post-tool-use", strings.NewReader(input)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHookSessionStart is the in-process share of SessionStart:
// register the lease, record the process, prune, print the claims.
func BenchmarkHookSessionStart(b *testing.B) {
	f := newFixture(b)
	for i := 0; i < 20; i++ {
		f.newSession("Waiting")
	}
	input := f.hookJSON("SessionStart", sessA, map[string]any{"source": "startup"})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := f.hooks().Run("session-start", strings.NewReader(input)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHookPreToolUseEdit is the in-process share of the file guard.
func BenchmarkHookPreToolUseEdit(b *testing.B) {
	f := newFixture(b)
	input := f.hookJSON("PreToolUse", sessA, map[string]any{"tool_name": "Edit", "tool_input": map[string]any{"file_path": filepath.Join(f.board.Dir, "todo", "x.md"), "old_string": "a", "new_string": "b"}})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := f.hooks().Run("pre-tool-use", strings.NewReader(input)); err != nil {
			b.Fatal(err)
		}
	}
}

// Two SessionEnd hooks of one session at once (a plugin's and a project
// install's): everything is released, and neither reports the other's
// releases as errors. The race is forced: the second runs whole right
// after the first's first release.
func TestHookSessionEndTwiceAtOnce(t *testing.T) {
	f := newFixture(t)
	var ids []string
	for i := 0; i < 8; i++ {
		id := f.newSession("Held")
		f.claim(sessA, id)
		ids = append(ids, id)
	}
	in := f.hookJSON("SessionEnd", sessA, map[string]any{"reason": "other"})
	var out2 strings.Builder
	h2 := f.hooks()
	h2.Stdout = &out2
	h1 := f.hooks()
	open := h1.Open
	h1.Open = func(dir string) (*sessions.Board, error) {
		b, err := open(dir)
		if err == nil {
			once := false
			b.OnEvent = func(sessions.Event, error) {
				if !once {
					once = true
					if err := h2.Run("session-end", strings.NewReader(in)); err != nil {
						t.Errorf("the second session-end: %v", err)
					}
				}
			}
		}
		return b, err
	}
	if err := h1.Run("session-end", strings.NewReader(in)); err != nil {
		t.Errorf("the first session-end: %v", err)
	}
	for _, id := range ids {
		if !f.inTodo(id) {
			t.Errorf("%s is not back in todo/", id)
		}
	}
	if !strings.Contains(out2.String(), "released") {
		t.Errorf("the second released nothing (%q): the race was not forced", out2.String())
	}
}
