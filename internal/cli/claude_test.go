package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/internal/templates"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// claudeFixture is a repository with a board, and a stand-in for the Claude
// Code process: a child process whose pid the hooks register.
type claudeFixture struct {
	t      testing.TB
	repo   string
	board  *sessions.Board
	claude *exec.Cmd
	env    map[string]string
	now    time.Time
	stdout bytes.Buffer
	stderr bytes.Buffer
}

func newClaudeFixture(t testing.TB) *claudeFixture {
	t.Helper()
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := sessions.Init(filepath.Join(repo, DefaultBoardDir))
	if err != nil {
		t.Fatal(err)
	}
	b.NoSync = true
	f := &claudeFixture{t: t, repo: repo, board: b, env: map[string]string{}, now: time.Now().UTC().Truncate(time.Second)}
	f.startClaude()
	return f
}

// startClaude starts a new stand-in Claude Code process.
func (f *claudeFixture) startClaude() {
	f.t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.claude = cmd
	f.t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
}

// stopClaude ends the stand-in process the way a crash would: no SessionEnd.
func (f *claudeFixture) stopClaude() {
	f.t.Helper()
	_ = f.claude.Process.Kill()
	_, _ = f.claude.Process.Wait()
}

// run returns a run whose working directory is the repository, whose
// clock is f.now, and whose owner process is the stand-in Claude.
func (f *claudeFixture) run(stdin string) *run {
	f.stdout.Reset()
	f.stderr.Reset()
	return &run{
		env: &Env{
			Stdin: strings.NewReader(stdin), Stdout: &f.stdout, Stderr: &f.stderr,
			Getenv:   func(k string) string { return f.env[k] },
			Getwd:    func() (string, error) { return f.repo, nil },
			Hostname: os.Hostname,
			Now:      func() time.Time { return f.now },
		},
		noSync: true,
		pid:    f.claude.Process.Pid,
	}
}

// hookJSON is the input Claude Code sends a hook (the fields its hooks
// reference documents, in the order Claude Code writes them).
func (f *claudeFixture) hookJSON(event, session string, extra map[string]any) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"session_id":%q,"transcript_path":%q,"cwd":%q,"permission_mode":"default","hook_event_name":%q`,
		session, "/home/ana/.claude/projects/-repo/"+session+".jsonl", f.repo, event)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, _ := json.Marshal(extra[k])
		fmt.Fprintf(&b, ",%q:%s", k, v)
	}
	b.WriteString("}")
	return b.String()
}

// hook runs one hook event as Claude Code would.
func (f *claudeFixture) hook(event, session string, extra map[string]any) error {
	f.t.Helper()
	names := map[string]string{"session-start": "SessionStart", "post-tool-use": "PostToolUse", "session-end": "SessionEnd"}
	return f.run(f.hookJSON(names[event], session, extra)).hook(event)
}

func (f *claudeFixture) mustHook(event, session string, extra map[string]any) {
	f.t.Helper()
	if err := f.hook(event, session, extra); err != nil {
		f.t.Fatalf("hook %s: %v (stderr %q)", event, err, f.stderr.String())
	}
}

func (f *claudeFixture) newSession(title string) string {
	f.t.Helper()
	s, err := f.board.Create(sessions.Meta{Title: title, Priority: sessions.Medium}, []byte("# "+title+"\n"))
	if err != nil {
		f.t.Fatal(err)
	}
	return s.ID
}

func (f *claudeFixture) claim(owner, id string) {
	f.t.Helper()
	c, err := claim.New(f.board, owner)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := c.Claim(id); err != nil {
		f.t.Fatal(err)
	}
}

func (f *claudeFixture) leases() *claim.Leases {
	return &claim.Leases{Board: f.board, Proc: proc.Env{Hostname: os.Hostname}, Now: func() time.Time { return f.now }}
}

func (f *claudeFixture) lease(owner string) (claim.Lease, bool) {
	f.t.Helper()
	l, err := f.leases().Get(owner)
	if errors.Is(err, fs.ErrNotExist) {
		return l, false
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return l, true
}

// held returns the ids in doing/<owner>/.
func (f *claudeFixture) held(owner string) []string {
	f.t.Helper()
	list, err := f.board.ListOwner(owner)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		f.t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return ids
}

func (f *claudeFixture) inTodo(id string) bool {
	_, err := os.Stat(f.board.Path(sessions.Todo, "", id))
	return err == nil
}

const sessA = "5c3e2a9b-1f4d-4e8a-9b2c-7d6e5f4a3b2c"
const sessB = "0a1b2c3d-4e5f-4a6b-8c7d-9e8f7a6b5c4d"

func TestHookSessionStartRegistersTheClaudeProcess(t *testing.T) {
	f := newClaudeFixture(t)
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
	f := newClaudeFixture(t)
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
	f := newClaudeFixture(t)
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
	f := newClaudeFixture(t)
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
	for _, p := range []string{claudeBeatPath(f.board.Dir, sessA), claudePidPath(f.board.Dir, f.claude.Process.Pid)} {
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
	f := newClaudeFixture(t)
	f.mustHook("session-start", sessA, map[string]any{"source": "startup"})
	f.mustHook("session-start", sessB, map[string]any{"source": "clear"})
	f.mustHook("session-end", sessA, map[string]any{"reason": "clear"})
	rec, ok := readClaudePid(claudePidPath(f.board.Dir, f.claude.Process.Pid))
	if !ok || rec.Owner != sessB {
		t.Errorf("pid record = %+v, %v; want owner %s", rec, ok, sessB)
	}
	if owner, ok := f.run("").claudeOwner(); !ok || owner != sessB {
		t.Errorf("claudeOwner = %q, %v; want %s", owner, ok, sessB)
	}
}

func TestHookSessionEndKeepsWithConfig(t *testing.T) {
	f := newClaudeFixture(t)
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
	f := newClaudeFixture(t)
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
	f := newClaudeFixture(t)
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
		if _, err := os.Stat(claudePidPath(f.board.Dir, pid)); err == nil {
			t.Errorf("the record of crashed pid %d survived", pid)
		}
	}
	if _, ok := f.lease(sessC); ok {
		t.Error("the lease of a crashed session that held nothing survived")
	}
	if _, ok := f.lease(sessA); !ok {
		t.Error("the lease of a crashed session with claims is gone: next can no longer see it is dead")
	}
	if _, err := os.Stat(claudePidPath(f.board.Dir, f.claude.Process.Pid)); err != nil {
		t.Errorf("the running session's record: %v", err)
	}
}

func TestHookPostToolUseThrottles(t *testing.T) {
	f := newClaudeFixture(t)
	f.mustHook("session-start", sessA, nil)
	start, _ := f.lease(sessA)

	f.now = f.now.Add(30 * time.Second)
	f.mustHook("post-tool-use", sessA, map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "/x"}})
	if l, _ := f.lease(sessA); !l.Heartbeat.Equal(start.Heartbeat) {
		t.Errorf("heartbeat moved %v after 30 s; want it throttled", l.Heartbeat.Sub(start.Heartbeat))
	}
	f.now = f.now.Add(claudeBeatEvery)
	f.mustHook("post-tool-use", sessA, map[string]any{"tool_name": "Bash"})
	l, _ := f.lease(sessA)
	if !l.Heartbeat.Equal(f.now) {
		t.Errorf("heartbeat = %v after %v; want %v", l.Heartbeat, claudeBeatEvery, f.now)
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
	f := newClaudeFixture(t)
	f.mustHook("post-tool-use", sessA, map[string]any{"tool_name": "Edit"})
	l, ok := f.lease(sessA)
	if !ok || len(l.Holders) != 1 || l.Holders[0].PID != f.claude.Process.Pid {
		t.Errorf("lease = %+v, %v; want the Claude process", l, ok)
	}
}

// A tool response may be megabytes; session_id and cwd come first.
func TestHookLargeInput(t *testing.T) {
	f := newClaudeFixture(t)
	big := strings.Repeat("x", 3*maxHookInput)
	f.mustHook("post-tool-use", sessA, map[string]any{"tool_name": "Read", "tool_response": map[string]any{"content": big}})
	if _, ok := f.lease(sessA); !ok {
		t.Error("no lease")
	}
}

func TestHookWithoutBoardDoesNothing(t *testing.T) {
	f := newClaudeFixture(t)
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

// The hook command exits 0 whatever happens: errors go to stderr.
func TestHookCommandNeverFails(t *testing.T) {
	f := newClaudeFixture(t)
	for _, tc := range []struct{ args, stdin, want string }{
		{"post-tool-use", "not json", "not a JSON object"},
		{"session-start", `{"cwd":"/"}`, "no session_id"},
		{"session-end", `{"session_id":"../../etc"}`, "invalid"},
		{"frobnicate", `{}`, "unknown hook event"},
		{"", `{}`, "unknown hook event"},
	} {
		r := f.run(tc.stdin)
		app := &ucli.App{Name: "pickup", Commands: []*ucli.Command{r.hookCommand()}, Writer: &f.stdout, ErrWriter: &f.stderr}
		args := []string{"pickup", "hook"}
		if tc.args != "" {
			args = append(args, tc.args)
		}
		if err := app.Run(args); err != nil {
			t.Errorf("hook %s returned %v; want nil (exit 0)", tc.args, err)
		}
		if !strings.Contains(f.stderr.String(), tc.want) {
			t.Errorf("hook %s: stderr %q, want %q", tc.args, f.stderr.String(), tc.want)
		}
	}
}

func TestParseHookInput(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    hookInput
		wantErr bool
	}{
		{in: `{"session_id":"s1","cwd":"/r","tool_input":{"a":[1,2]}}`, want: hookInput{SessionID: "s1", Cwd: "/r"}},
		{in: `{"tool_input":{"session_id":"fake"},"cwd":"/r","session_id":"s2"}`, want: hookInput{SessionID: "s2", Cwd: "/r"}},
		{in: `{"session_id":"s3"}`, want: hookInput{SessionID: "s3"}},
		{in: `{"cwd":"/r"}`, wantErr: true},
		{in: `[]`, wantErr: true},
		{in: ``, wantErr: true},
		{in: `{"session_id":`, wantErr: true},
		{in: `{"session_id":"s4","tool_response":{"content":"cut here`, want: hookInput{SessionID: "s4"}},
	} {
		got, err := parseHookInput([]byte(tc.in))
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("parseHookInput(%s) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// claudeOwner trusts a record only for the very process it names.
func TestClaudeOwnerNeedsTheSameProcess(t *testing.T) {
	f := newClaudeFixture(t)
	f.mustHook("session-start", sessA, nil)
	if owner, ok := f.run("").claudeOwner(); !ok || owner != sessA {
		t.Fatalf("claudeOwner = %q, %v; want %s", owner, ok, sessA)
	}
	// A record of an earlier process that had this pid.
	path := claudePidPath(f.board.Dir, f.claude.Process.Pid)
	rec, _ := readClaudePid(path)
	rec.Process.Start++
	if err := writeClaudePid(f.board.Dir, rec); err != nil {
		t.Fatal(err)
	}
	if owner, ok := f.run("").claudeOwner(); ok {
		t.Errorf("claudeOwner trusted a record of another process: %q", owner)
	}
	// No record at all.
	r := f.run("")
	r.pid = os.Getpid()
	if owner, ok := r.claudeOwner(); ok {
		t.Errorf("claudeOwner without a record = %q", owner)
	}
}

// ---------------------------------------------------------------------------
// pickup init --claude

func clRepo(t *testing.T) string {
	t.Helper()
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

func clInstallRun(repo string) (*run, *bytes.Buffer) {
	var out bytes.Buffer
	return &run{noSync: true, env: &Env{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out,
		Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return repo, nil },
		Hostname: os.Hostname, Now: time.Now,
	}}, &out
}

func clInstall(t *testing.T, repo string, uninstall bool) []claudeChange {
	t.Helper()
	r, _ := clInstallRun(repo)
	changes, err := r.installClaude(repo, uninstall)
	if err != nil {
		t.Fatalf("installClaude(uninstall=%v): %v", uninstall, err)
	}
	return changes
}

func clRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// clSnapshot returns every file under dir with its content.
func clSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			files[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

const wantFreshSettings = `{
  "hooks": {
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "pickup hook session-start"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "pickup hook post-tool-use"
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "pickup hook session-end"
          }
        ]
      }
    ]
  }
}
`

func TestInstallClaudeFresh(t *testing.T) {
	repo := clRepo(t)
	clInstall(t, repo, false)
	if got := clRead(t, filepath.Join(repo, ".claude", "settings.json")); got != wantFreshSettings {
		t.Errorf("settings.json =\n%s\nwant\n%s", got, wantFreshSettings)
	}
	for _, f := range templates.Claude() {
		if got := clRead(t, filepath.Join(repo, f.Path)); got != string(f.Data) {
			t.Errorf("%s differs from its template", f.Path)
		}
	}
	// Idempotent: a second run changes nothing.
	before := clSnapshot(t, repo)
	for _, ch := range clInstall(t, repo, false) {
		if ch.Action != "unchanged" {
			t.Errorf("second install: %s %s", ch.Action, ch.Path)
		}
	}
	if after := clSnapshot(t, repo); !reflect.DeepEqual(before, after) {
		t.Errorf("second install changed the tree")
	}
	// Uninstall removes exactly what was added: nothing is left.
	clInstall(t, repo, true)
	if left := clSnapshot(t, repo); len(left) != 1 { // "./"
		t.Errorf("after uninstall the repository holds %v", left)
	}
}

// settingsWithUserHooks is a settings.json as Claude Code writes it, with
// the user's own hooks and other settings, including strings whose escapes
// must survive as written.
const settingsWithUserHooks = `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": [
      "Bash(npm run test:*)",
      "Read(~/.zshrc)"
    ],
    "deny": []
  },
  "env": {
    "GREETING": "h\u00e9llo <b>&amp;</b>",
    "RATIO": 1.50
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/check-bash",
            "timeout": 30
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "npx prettier --write \"$CLAUDE_PROJECT_DIR\""
          }
        ]
      }
    ],
    "Stop": []
  },
  "statusLine": {
    "type": "command",
    "command": "~/.claude/statusline.sh"
  },
  "includeCoAuthoredBy": false
}
`

func TestInstallClaudeMergesIntoExistingSettings(t *testing.T) {
	repo := clRepo(t)
	settings := filepath.Join(repo, ".claude", "settings.json")
	wtFile(t, repo, ".claude/settings.json", settingsWithUserHooks)
	wtFile(t, repo, ".claude/settings.local.json", `{"model": "opus"}`)
	wtFile(t, repo, ".claude/skills/review/SKILL.md", "---\nname: review\n---\nmine\n")

	clInstall(t, repo, false)
	got := clRead(t, settings)
	var doc map[string]any
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("merged settings.json is not valid JSON: %v\n%s", err, got)
	}
	// Everything of the user's is there, as written.
	for _, want := range []string{`"GREETING": "h\u00e9llo <b>&amp;</b>"`, `"RATIO": 1.50`, `"command": "/usr/local/bin/check-bash"`,
		`"command": "npx prettier --write \"$CLAUDE_PROJECT_DIR\""`, `"Stop": []`, `"includeCoAuthoredBy": false`} {
		if !strings.Contains(got, want) {
			t.Errorf("merged settings.json lost %s:\n%s", want, got)
		}
	}
	// pickup's PostToolUse group comes after the user's, in the same array.
	post := doc["hooks"].(map[string]any)["PostToolUse"].([]any)
	if len(post) != 2 || post[0].(map[string]any)["matcher"] != "Edit|Write" || post[1].(map[string]any)["matcher"] != "*" {
		t.Errorf("PostToolUse = %v; want the user's group, then pickup's", post)
	}
	// Keys keep their order; new ones come last.
	if i, j := strings.Index(got, `"permissions"`), strings.Index(got, `"statusLine"`); i < 0 || j < i {
		t.Errorf("key order changed:\n%s", got)
	}
	if i, j := strings.Index(got, `"Stop"`), strings.Index(got, `"SessionStart"`); j < i {
		t.Errorf("SessionStart was not added after the user's events:\n%s", got)
	}

	// A second run is byte-stable.
	for _, ch := range clInstall(t, repo, false) {
		if ch.Action != "unchanged" {
			t.Errorf("second install: %s %s", ch.Action, ch.Path)
		}
	}
	if again := clRead(t, settings); again != got {
		t.Errorf("second install changed settings.json:\n%s", again)
	}

	// Uninstall restores the original byte for byte, and leaves the
	// user's other files alone.
	clInstall(t, repo, true)
	if restored := clRead(t, settings); restored != settingsWithUserHooks {
		t.Errorf("uninstall left\n%s\nwant the original\n%s", restored, settingsWithUserHooks)
	}
	if got := clRead(t, filepath.Join(repo, ".claude", "settings.local.json")); got != `{"model": "opus"}` {
		t.Errorf("settings.local.json changed: %s", got)
	}
	if _, err := os.Stat(filepath.Join(repo, ".claude", "skills", "review", "SKILL.md")); err != nil {
		t.Errorf("the user's skill is gone: %v", err)
	}
	for _, name := range templates.SkillNames() {
		if _, err := os.Stat(filepath.Join(repo, ".claude", "skills", name)); err == nil {
			t.Errorf("skill %s survived uninstall", name)
		}
	}
}

// A file in another layout is merged without losing anything; uninstall
// gives back the same settings (in Claude Code's own layout).
func TestInstallClaudeOtherLayout(t *testing.T) {
	repo := clRepo(t)
	orig := `{"hooks":{"Notification":[{"hooks":[{"type":"command","command":"notify-send done"}]}]},` +
		"\n\t\"env\": {\"A\": \"1\"}, \"n\": 1e3, \"nested\": [[], {}, [1, [2]]]}"
	wtFile(t, repo, ".claude/settings.json", orig)
	clInstall(t, repo, false)
	merged := clRead(t, filepath.Join(repo, ".claude", "settings.json"))
	if !strings.Contains(merged, `"n": 1e3`) {
		t.Errorf("a number was rewritten:\n%s", merged)
	}
	clInstall(t, repo, true)
	var want, got any
	if err := json.Unmarshal([]byte(orig), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(clRead(t, filepath.Join(repo, ".claude", "settings.json"))), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after uninstall: %v\nwant %v", got, want)
	}
}

func TestInstallClaudeRefusesInvalidJSON(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
		syntax              bool // uninstall refuses it too
	}{
		{"trailing comma", "{\n  \"hooks\": {\n    \"Stop\": [],\n  }\n}\n", "line 4, column 3", true},
		{"comment", "{\n  // mine\n  \"a\": 1\n}\n", "line 2, column 3", true},
		{"truncated", "{\n  \"a\": [1,\n", "line 3", true},
		{"not an object", "[1, 2]\n", "must be a JSON object", true},
		{"hooks not an object", "{\"hooks\": [\"x\"]}\n", `"hooks" is not an object`, false},
		{"event not an array", "{\"hooks\": {\"SessionEnd\": {}}}\n", `"hooks.SessionEnd" is not an array`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := clRepo(t)
			wtFile(t, repo, ".claude/settings.json", tc.content)
			before := clSnapshot(t, repo)
			r, _ := clInstallRun(repo)
			_, err := r.installClaude(repo, false)
			if err == nil {
				t.Fatal("installClaude accepted it")
			}
			settings := filepath.Join(repo, ".claude", "settings.json")
			if msg := err.Error(); !strings.Contains(msg, settings) || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "nothing was changed") {
				t.Errorf("error %q; want the file, %q and that nothing was changed", msg, tc.want)
			}
			if after := clSnapshot(t, repo); !reflect.DeepEqual(before, after) {
				t.Errorf("something changed: %v", after)
			}
			if _, err := r.installClaude(repo, true); (err != nil) != tc.syntax {
				t.Errorf("uninstall: %v", err)
			}
			if after := clSnapshot(t, repo); !reflect.DeepEqual(before, after) {
				t.Errorf("uninstall changed something: %v", after)
			}
		})
	}
}

func TestInstallClaudeKeepsEditedSkills(t *testing.T) {
	repo := clRepo(t)
	clInstall(t, repo, false)
	edited := filepath.Join(repo, ".claude", "skills", "pickup", "SKILL.md")
	if err := os.WriteFile(edited, []byte("my own version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, uninstall := range []bool{false, true} {
		var kept bool
		for _, ch := range clInstall(t, repo, uninstall) {
			if ch.Path == edited {
				kept = ch.Action == "kept"
			}
		}
		if !kept || clRead(t, edited) != "my own version\n" {
			t.Errorf("uninstall=%v did not keep the edited skill", uninstall)
		}
	}
}

// An entry of another pickup version is replaced; pickup's command that
// the user moved into a group of their own counts as installed.
func TestInstallClaudeReplacesOnlyPickupEntries(t *testing.T) {
	repo := clRepo(t)
	wtFile(t, repo, ".claude/settings.json", `{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {
            "type": "command",
            "command": "direnv export json"
          },
          {
            "type": "command",
            "command": "pickup hook session-start"
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "pickup hook session-end --old-flag"
          }
        ]
      }
    ]
  }
}
`)
	clInstall(t, repo, false)
	got := clRead(t, filepath.Join(repo, ".claude", "settings.json"))
	if strings.Contains(got, "--old-flag") {
		t.Errorf("the old pickup entry stayed:\n%s", got)
	}
	if strings.Count(got, "pickup hook session-start") != 1 || strings.Count(got, "pickup hook session-end") != 1 {
		t.Errorf("want one entry per event:\n%s", got)
	}
	clInstall(t, repo, true)
	got = clRead(t, filepath.Join(repo, ".claude", "settings.json"))
	if strings.Contains(got, "pickup hook") || !strings.Contains(got, "direnv export json") || !strings.Contains(got, `"matcher": "startup"`) {
		t.Errorf("uninstall should leave exactly the user's hook:\n%s", got)
	}
}

// A settings.json that is a symlink (a dotfiles manager's, or one a cloned
// repository committed to point at the user's own settings) is refused,
// install and uninstall alike: its target stays as it was, and nothing
// else is written.
func TestInstallClaudeRefusesSymlink(t *testing.T) {
	repo := clRepo(t)
	target := filepath.Join(t.TempDir(), "settings.json")
	const content = "{\n  \"model\": \"opus\"\n}\n"
	if err := os.WriteFile(target, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	wtDir(t, repo, ".claude")
	link := filepath.Join(repo, ".claude", "settings.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, uninstall := range []bool{false, true} {
		r, _ := clInstallRun(repo)
		_, err := r.installClaude(repo, uninstall)
		var ue *sessions.UnsafePathError
		if ExitCode(err) != ExitUsage || !errors.As(err, &ue) || ue.Path != link {
			t.Fatalf("installClaude(uninstall=%v) through a linked settings.json = %v, want exit 2 naming %s", uninstall, err, link)
		}
		if got := clRead(t, target); got != content {
			t.Errorf("the link's target changed: %q", got)
		}
		if _, err := os.Lstat(filepath.Join(repo, ".claude", "skills")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("skills were installed beside the refused link: %v", err)
		}
	}
}

func TestInitIntegrationFlags(t *testing.T) {
	repo := clRepo(t)
	wtDir(t, repo, ".git")
	runInit := func(args ...string) (string, error) {
		r, out := clInstallRun(repo)
		app := &ucli.App{Name: "pickup", Writer: out, ErrWriter: out, Flags: r.globalFlags(), Before: r.resolve,
			Commands: []*ucli.Command{{Name: "init", Flags: append(initClaudeFlags(), r.globalFlags()...), Before: r.resolve, Action: r.initIntegration}}}
		err := app.Run(append([]string{"pickup", "init"}, args...))
		return out.String(), err
	}
	out, err := runInit("--agents")
	if err != nil || out != templates.Agents() {
		t.Errorf("--agents printed %q, %v; want the snippet alone", out, err)
	}
	for _, args := range [][]string{{"--uninstall"}, {"--agents", "--claude"}} {
		if _, err := runInit(args...); ExitCode(err) != ExitUsage {
			t.Errorf("init %v: %v, want a usage error", args, err)
		}
	}
	out, err = runInit("--claude")
	if err != nil || !strings.Contains(out, "board ready at "+filepath.Join(repo, DefaultBoardDir)) ||
		!strings.Contains(out, "created   "+filepath.Join(repo, ".claude", "settings.json")) {
		t.Errorf("init --claude: %v\n%s", err, out)
	}
	out, err = runInit("--claude")
	if err != nil || !strings.Contains(out, "up to date") {
		t.Errorf("second init --claude: %v\n%s", err, out)
	}
	out, err = runInit("--claude", "--json")
	var obj struct {
		Dir     string         `json:"dir"`
		Changes []claudeChange `json:"changes"`
	}
	if err != nil || json.Unmarshal([]byte(out), &obj) != nil || obj.Dir == "" || len(obj.Changes) != 3 {
		t.Errorf("init --claude --json: %v\n%s", err, out)
	}
	out, err = runInit("--claude", "--uninstall")
	if err != nil || !strings.Contains(out, "removed") {
		t.Errorf("init --claude --uninstall: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(repo, ".claude")); err == nil {
		t.Error(".claude survived uninstall")
	}
	if _, err := os.Stat(filepath.Join(repo, DefaultBoardDir, "todo")); err != nil {
		t.Error("uninstall removed the board")
	}
}

// BenchmarkHookPostToolUseThrottled is the in-process share of the hook
// that runs after every tool use: read the input, find the board, one stat.
func BenchmarkHookPostToolUseThrottled(b *testing.B) {
	f := newClaudeFixture(b)
	f.mustHook("session-start", sessA, nil)
	input := f.hookJSON("PostToolUse", sessA, map[string]any{"tool_name": "Edit", "tool_input": map[string]any{"file_path": "/r/x.go", "old_string": "a", "new_string": "b"}})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := f.run(input).hook("post-tool-use"); err != nil {
			b.Fatal(err)
		}
	}
}
