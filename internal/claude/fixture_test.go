package claude

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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/claimhook"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// boardRel is the board's place in a repository, as the command line
// finds it by default.
const boardRel = ".spx/sessions"

// fixture is a repository with a board, and a stand-in for the Claude
// Code process: a child process whose pid the hooks register.
type fixture struct {
	t      testing.TB
	repo   string
	board  *sessions.Board
	claude *exec.Cmd
	env    map[string]string
	now    time.Time
	stdout bytes.Buffer
	stderr bytes.Buffer
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := sessions.Init(filepath.Join(repo, boardRel))
	if err != nil {
		t.Fatal(err)
	}
	b.NoSync = true
	f := &fixture{t: t, repo: repo, board: b, env: map[string]string{}, now: time.Now().UTC().Truncate(time.Second)}
	f.startClaude()
	return f
}

// startClaude starts a new stand-in Claude Code process.
func (f *fixture) startClaude() {
	f.t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.claude = cmd
	f.t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
}

// stopClaude ends the stand-in process the way a crash would: no SessionEnd.
func (f *fixture) stopClaude() {
	f.t.Helper()
	_ = f.claude.Process.Kill()
	_, _ = f.claude.Process.Wait()
}

// hooks returns Hooks wired the way the command line wires them, with
// the repository as working directory, f.now as the clock, and the
// stand-in Claude as the process that ran the hook.
func (f *fixture) hooks() *Hooks {
	f.stdout.Reset()
	f.stderr.Reset()
	return &Hooks{
		Stdout: &f.stdout,
		Getenv: func(k string) string { return f.env[k] },
		Now:    func() time.Time { return f.now },
		Proc:   proc.Env{Hostname: os.Hostname},
		RepoTop: func(cwd string) string {
			if cwd == "" {
				cwd = f.repo
			}
			return repoTop(cwd)
		},
		BoardDir: func(cwd string) (string, error) {
			if d := f.env["PICKUP_DIR"]; d != "" {
				return d, nil
			}
			if cwd == "" {
				cwd = f.repo
			}
			return filepath.Join(repoTop(cwd), boardRel), nil
		},
		Open: func(dir string) (*sessions.Board, error) {
			b, err := sessions.Open(dir)
			if err == nil {
				b.NoSync = true
				b.Now = func() time.Time { return f.now }
			}
			return b, err
		},
		Invoker:  func() (proc.Process, error) { return f.process(), nil },
		Describe: func(s sessions.Session) string { return fmt.Sprintf("%s [%s] %s", s.ID, s.Priority, s.Title) },
	}
}

// process is the stand-in Claude Code process.
func (f *fixture) process() proc.Process {
	f.t.Helper()
	p, err := proc.Env{Hostname: os.Hostname}.Lookup(f.claude.Process.Pid)
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

// owner is the session recorded for the stand-in Claude Code process.
func (f *fixture) owner() (string, bool) { return OwnerOf(f.board.Dir, f.process()) }

// repoTop is the nearest directory at or above dir that holds .git, else
// dir: the command line's rule, for the tests.
func repoTop(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// hookJSON is the input Claude Code sends a hook (the fields its hooks
// reference documents, in the order Claude Code writes them).
func (f *fixture) hookJSON(event, session string, extra map[string]any) string {
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
func (f *fixture) hook(event, session string, extra map[string]any) error {
	f.t.Helper()
	names := map[string]string{"session-start": "SessionStart", "post-tool-use": "PostToolUse", "session-end": "SessionEnd"}
	return f.hooks().Run(event, strings.NewReader(f.hookJSON(names[event], session, extra)))
}

func (f *fixture) mustHook(event, session string, extra map[string]any) {
	f.t.Helper()
	if err := f.hook(event, session, extra); err != nil {
		f.t.Fatalf("hook %s: %v (stderr %q)", event, err, f.stderr.String())
	}
}

func (f *fixture) newSession(title string) string {
	f.t.Helper()
	s, err := f.board.Create(sessions.Meta{Title: title, Priority: sessions.Medium}, []byte("# "+title+"\n"))
	if err != nil {
		f.t.Fatal(err)
	}
	return s.ID
}

func (f *fixture) claim(owner, id string) {
	f.t.Helper()
	c, err := claim.New(f.board, owner)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := c.Claim(context.Background(), id); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) leases() *claim.Leases {
	l := &claim.Leases{Board: f.board, Now: func() time.Time { return f.now }}
	claimhook.UseSystem(l, proc.Env{Hostname: os.Hostname})
	return l
}

func (f *fixture) lease(owner string) (claim.Lease, bool) {
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
func (f *fixture) held(owner string) []string {
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

func (f *fixture) inTodo(id string) bool {
	_, err := os.Stat(f.board.Path(sessions.Todo, "", id))
	return err == nil
}

const sessA = "5c3e2a9b-1f4d-4e8a-9b2c-7d6e5f4a3b2c"
const sessB = "0a1b2c3d-4e5f-4a6b-8c7d-9e8f7a6b5c4d"
