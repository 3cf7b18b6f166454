package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// gitTestEnv is the environment of git and pickup in these tests: none of
// the machine's git configuration or pickup variables, a fixed identity.
func gitTestEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PICKUP_") || strings.HasPrefix(k, "GIT_") || k == "CLAUDE_SESSION_ID" || k == "CODEX_THREAD_ID" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1", "USER=tester")
	for _, v := range []string{"GIT_AUTHOR", "GIT_COMMITTER"} {
		env = append(env, v+"_NAME=Tester", v+"_EMAIL=tester@example.com")
	}
	return append(env, extra...)
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	// gitx runs git with the test process's environment.
	for _, kv := range gitTestEnv() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") {
			t.Setenv(k, v)
		}
	}
	for _, k := range []string{"PICKUP_COMMIT", "PICKUP_DIR"} {
		t.Setenv(k, "")
	}
}

// gitIn runs git in dir and fails the test if it fails.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitTestEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// gitRepoWithBoard makes a repository whose main work tree holds a board
// at .spx/sessions with n sessions, all committed.
func gitRepoWithBoard(t *testing.T, n int) (top string, b *sessions.Board, ids []string) {
	t.Helper()
	top = filepath.Join(t.TempDir(), "repo")
	gitIn(t, t.TempDir(), "init", "-q", "-b", "main", top)
	if err := os.WriteFile(filepath.Join(top, "README"), []byte("readme\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := sessions.Init(filepath.Join(top, DefaultBoardDir))
	if err != nil {
		t.Fatal(err)
	}
	b.NoSync = true
	for i := range n {
		s, err := b.Create(sessions.Meta{Title: fmt.Sprintf("session %d", i)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	gitIn(t, top, "add", "-A")
	gitIn(t, top, "commit", "-q", "-m", "board")
	return top, b, ids
}

func TestCommitMessage(t *testing.T) {
	for _, tt := range []struct {
		ev   sessions.Event
		want string
	}{
		{sessions.Event{Op: "next", ID: "2026-11-22_09-15-03", From: "todo", To: "doing/agent-7", Owner: "agent-7"},
			"pickup: claim 2026-11-22_09-15-03 (agent-7)\n\ntodo -> doing/agent-7\n"},
		{sessions.Event{Op: "new", ID: "x", To: "todo"}, "pickup: new x\n\n(new) -> todo\n"},
		{sessions.Event{Op: "set aside", ID: "x", From: "doing/a", To: "failed", Owner: "a", Reason: "exit status 1"},
			"pickup: set aside x (a)\n\ndoing/a -> failed\nexit status 1\n"},
	} {
		if got := commitMessage(tt.ev); got != tt.want {
			t.Errorf("commitMessage(%+v) = %q, want %q", tt.ev, got, tt.want)
		}
	}
}

func TestCommitEnv(t *testing.T) {
	for v, want := range map[string][3]bool{ // on, set, error
		"": {false, false, false}, "1": {true, true, false}, "true": {true, true, false}, "YES": {true, true, false},
		"0": {false, true, false}, "false": {false, true, false}, "maybe": {false, false, true},
	} {
		on, set, err := commitEnv(func(string) string { return v })
		if on != want[0] || set != want[1] || (err != nil) != want[2] {
			t.Errorf("$PICKUP_COMMIT=%q: on %v set %v err %v", v, on, set, err)
		}
		if err != nil && ExitCode(err) != ExitUsage {
			t.Errorf("$PICKUP_COMMIT=%q: exit %d, want %d", v, ExitCode(err), ExitUsage)
		}
	}
}

// moveAndLog moves a session as a transition does and returns its event.
func moveAndLog(t *testing.T, b *sessions.Board, op, id, owner string, fromSt sessions.State, fromOwner string, toSt sessions.State, toOwner string) sessions.Event {
	t.Helper()
	src, dst := b.Path(fromSt, fromOwner, id), b.Path(toSt, toOwner, id)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(src, dst); err != nil {
		t.Fatal(err)
	}
	ev := b.NewEvent(sessions.Event{Op: op, ID: id, Owner: owner, Src: src, Dst: dst})
	if err := b.AppendEvent(ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// The commit hook commits exactly the moved paths and the event log; the
// user's staged work stays staged.
func TestCommitterCommitsTheTransition(t *testing.T) {
	needGit(t)
	top, b, ids := gitRepoWithBoard(t, 2)
	os.WriteFile(filepath.Join(top, "README"), []byte("staged by the user\n"), 0o644)
	gitIn(t, top, "add", "README")
	c := &committer{}
	if err := c.attach(b, true, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	hook := c.hook(b)
	hook(moveAndLog(t, b, "next", ids[0], "agent-7", sessions.Todo, "", sessions.Doing, "agent-7"), nil)
	hook(moveAndLog(t, b, "done", ids[0], "agent-7", sessions.Doing, "agent-7", sessions.Done, ""), nil)
	if err := c.finish(&run{env: &Env{Stderr: io.Discard}}, nil); err != nil {
		t.Fatal(err)
	}
	if c.commits != 2 {
		t.Errorf("%d commits, want 2", c.commits)
	}
	subjects := nonEmptyLines(gitIn(t, top, "log", "--format=%s", "-3"))
	want := []string{"pickup: done " + ids[0] + " (agent-7)", "pickup: claim " + ids[0] + " (agent-7)", "board"}
	if !slices.Equal(subjects, want) {
		t.Errorf("log %q, want %q", subjects, want)
	}
	files := nonEmptyLines(gitIn(t, top, "show", "--name-status", "--no-renames", "--format=", "HEAD~1"))
	// The event log is new, or already committed with the sessions' "new"
	// events.
	wantFiles := []string{"A\t.spx/sessions/doing/agent-7/" + ids[0] + ".md", "A\t.spx/sessions/events.log", "D\t.spx/sessions/todo/" + ids[0] + ".md"}
	if len(files) == 3 && files[1] == "M\t.spx/sessions/events.log" {
		wantFiles[1] = files[1]
	}
	if !slices.Equal(files, wantFiles) {
		t.Errorf("claim commit holds %q, want %q", files, wantFiles)
	}
	if staged := nonEmptyLines(gitIn(t, top, "diff", "--cached", "--name-only")); !slices.Equal(staged, []string{"README"}) {
		t.Errorf("staged: %q, want the user's README only", staged)
	}
	if st := gitIn(t, top, "status", "--porcelain", "--", DefaultBoardDir); st != "" {
		t.Errorf("board not committed: %q", st)
	}
}

// A stale index.lock is reported when the command ends, with what to do,
// and left in place; the transition itself stands.
func TestCommitterStaleIndexLock(t *testing.T) {
	needGit(t)
	top, b, ids := gitRepoWithBoard(t, 1)
	lock := filepath.Join(top, ".git", "index.lock")
	os.WriteFile(lock, nil, 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(lock, old, old)
	c := &committer{}
	c.attach(b, true, func(string) string { return "" })
	c.hook(b)(moveAndLog(t, b, "next", ids[0], "a", sessions.Todo, "", sessions.Doing, "a"), nil)
	var stderr bytes.Buffer
	r := &run{env: &Env{Stdout: io.Discard, Stderr: &stderr}}
	err := c.finish(r, nil)
	if !errors.Is(err, gitx.ErrIndexLocked) || ExitCode(err) != ExitError {
		t.Fatalf("finish = %v (exit %d), want an index lock error, exit 1", err, ExitCode(err))
	}
	if code := r.report(err); code != ExitError {
		t.Errorf("exit %d", code)
	}
	for _, want := range []string{"not committed", "crashed", lock} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	// What to do (printed as the hint once errors.go asks errors for one).
	var h interface{ Hint() string }
	if !errors.As(err, &h) {
		t.Fatal("no hint")
	}
	for _, want := range []string{"check `ps`", lock, "pickup sync", "the board itself is correct"} {
		if !strings.Contains(h.Hint(), want) {
			t.Errorf("hint lacks %q: %s", want, h.Hint())
		}
	}
	if _, err := os.Stat(lock); err != nil {
		t.Error("index.lock was removed")
	}
	if _, err := os.Stat(b.Path(sessions.Doing, "a", ids[0])); err != nil {
		t.Error("the transition was undone")
	}
	// A failed command keeps its own error; the commit failure is a warning.
	own := errors.New("own failure")
	if err := c.finish(r, own); err != own {
		t.Errorf("finish(own) = %v", err)
	}
}

// Without commit mode nothing runs git (the board need not be in a
// repository); with it outside a repository, every transition says so.
func TestCommitterModes(t *testing.T) {
	needGit(t)
	b, err := sessions.Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	b.NoSync = true
	s, _ := b.Create(sessions.Meta{}, nil)
	ev := b.NewEvent(sessions.Event{Op: "claim", ID: s.ID, To: "doing/a"})
	env := func(v string) func(string) string { return func(string) string { return v } }

	off := &committer{}
	off.attach(b, false, env(""))
	off.hook(b)(ev, errors.New("disk full"))
	var stderr bytes.Buffer
	if err := off.finish(&run{env: &Env{Stderr: &stderr}}, nil); err != nil {
		t.Errorf("commit mode off: %v", err)
	}
	if !strings.Contains(stderr.String(), "pickup: warning: claim "+s.ID+" happened but is missing from events.log: disk full") {
		t.Errorf("a failed append was not reported: %q", stderr.String())
	}

	// In this order: "env" removes the config file that "config" needs (a
	// map's random order made this test fail now and then).
	os.WriteFile(filepath.Join(b.Dir, sessions.ConfigFile), []byte("commit: true\n"), 0o644)
	for _, name := range []string{"config", "env", "flag"} {
		c := &committer{}
		switch name {
		case "config":
			c.attach(b, false, env(""))
		case "env":
			os.Remove(filepath.Join(b.Dir, sessions.ConfigFile))
			c.attach(b, false, env("1"))
		case "flag":
			c.attach(b, true, env("0"))
		}
		c.hook(b)(ev, nil)
		c.hook(b)(ev, nil)
		err := c.finish(&run{env: &Env{Stderr: io.Discard}}, nil)
		if !errors.Is(err, gitx.ErrNotRepo) || len(c.errs) != 2 {
			t.Errorf("%s: commit mode outside a repository: %v (%d errors)", name, err, len(c.errs))
		}
	}
	// $PICKUP_COMMIT=0 overrides the board's setting.
	os.WriteFile(filepath.Join(b.Dir, sessions.ConfigFile), []byte("commit: true\n"), 0o644)
	c := &committer{}
	c.attach(b, false, env("0"))
	c.hook(b)(ev, nil)
	if err := c.finish(&run{env: &Env{Stderr: io.Discard}}, nil); err != nil {
		t.Errorf("PICKUP_COMMIT=0: %v", err)
	}
	if err := (&committer{}).attach(b, false, env("maybe")); ExitCode(err) != ExitUsage {
		t.Errorf("bad $PICKUP_COMMIT: %v", err)
	}
}

// Pending board changes are committed without runtime or temporary files,
// even where nothing ignores them, and without the user's other changes.
func TestCommitPendingBoard(t *testing.T) {
	needGit(t)
	top, b, ids := gitRepoWithBoard(t, 2)
	// Nothing ignores the runtime files (a clone of a board from before
	// boards had their own .gitignore).
	os.Remove(filepath.Join(b.RuntimeDir(), ".gitignore"))
	os.WriteFile(filepath.Join(b.Dir, ".gitignore"), []byte("# nothing\n"), 0o644)
	os.MkdirAll(filepath.Join(b.RuntimeDir(), "leases"), 0o755)
	os.WriteFile(filepath.Join(b.RuntimeDir(), "leases", "alice.json"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(b.Dir, "todo", "."+ids[1]+".md123"), []byte("temp"), 0o644)
	os.WriteFile(filepath.Join(top, "README"), []byte("the user's\n"), 0o644)
	moveAndLog(t, b, "done", ids[0], "", sessions.Todo, "", sessions.Done, "")
	repo, err := gitx.Find(context.Background(), b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := commitPendingBoard(context.Background(), repo, b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{".spx/sessions/.gitignore", ".spx/sessions/done/" + ids[0] + ".md", ".spx/sessions/events.log", ".spx/sessions/todo/" + ids[0] + ".md"}
	if !slices.Equal(got, want) {
		t.Errorf("committed %q, want %q", got, want)
	}
	st := gitIn(t, top, "status", "--porcelain", "--untracked-files=all")
	for _, l := range []string{" M README", "?? .spx/sessions/.pickup/leases/alice.json", "?? .spx/sessions/todo/." + ids[1] + ".md123"} {
		if !strings.Contains(st, l+"\n") {
			t.Errorf("status lacks %q:\n%s", l, st)
		}
	}
	if got, err := commitPendingBoard(context.Background(), repo, b.Dir); err != nil || got != nil {
		t.Errorf("nothing pending: %q, %v", got, err)
	}
}

// --- End to end, with pickup processes -------------------------------------

// TestGitHelperPickup is the pickup command for the process tests: the test
// binary run with PICKUP_GIT_HELPER=1 and pickup's arguments after "--".
func TestGitHelperPickup(t *testing.T) {
	if os.Getenv("PICKUP_GIT_HELPER") != "1" {
		t.Skip("the pickup command of the git process tests")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(Main(OSEnv(), append([]string{"pickup"}, args...)))
}

// requireWired skips the process tests in -short mode and without git.
func requireWired(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs many pickup and git processes")
	}
	needGit(t)
}

type pickupProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
}

// runPickup starts a pickup process (safe in any goroutine).
func runPickup(dir string, args ...string) (*pickupProc, error) {
	p := &pickupProc{cmd: exec.Command(os.Args[0], append([]string{"-test.run=^TestGitHelperPickup$", "--"}, args...)...)}
	p.cmd.Dir = dir
	p.cmd.Env = gitTestEnv("PICKUP_GIT_HELPER=1", "PICKUP_NO_SYNC=1")
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	return p, p.cmd.Start()
}

func startPickup(t *testing.T, dir string, args ...string) *pickupProc {
	t.Helper()
	p, err := runPickup(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *pickupProc) wait() int {
	if err := p.cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return -1
	}
	return 0
}

func pickup(t *testing.T, dir string, args ...string) string {
	t.Helper()
	p := startPickup(t, dir, args...)
	if code := p.wait(); code != 0 {
		t.Fatalf("pickup %s (in %s): exit %d\n%s%s", strings.Join(args, " "), dir, code, p.stdout.String(), p.stderr.String())
	}
	return p.stdout.String()
}

// workEvents parses the JSON lines of pickup work --json: ids by event.
func workEvents(t *testing.T, out string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var e struct{ Event, ID string }
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		if e.ID != "" {
			got[e.Event] = append(got[e.Event], e.ID)
		}
	}
	return got
}

// countOps counts the event log's lines per id and operation.
func countOps(t *testing.T, b *sessions.Board) map[string]map[string]int {
	t.Helper()
	events, bad, err := b.Events("")
	if err != nil || len(bad) > 0 {
		t.Fatalf("event log: %v, bad lines %v", err, bad)
	}
	out := map[string]map[string]int{}
	for _, e := range events {
		if out[e.ID] == nil {
			out[e.ID] = map[string]int{}
		}
		out[e.ID][e.Op]++
	}
	return out
}

// Two worktrees of one repository, 4 pickup processes in each, drain one
// board: the main work tree's. Every session is claimed and done exactly
// once; the linked worktree's checked-out copy of the board is untouched.
func TestGitWorktreesDrain(t *testing.T) {
	requireWired(t)
	const n = 32
	top, b, ids := gitRepoWithBoard(t, n)
	wt := filepath.Join(t.TempDir(), "wt")
	gitIn(t, top, "worktree", "add", "-q", wt)
	os.MkdirAll(filepath.Join(wt, "sub"), 0o755)
	var procs []*pickupProc
	for i := range 8 {
		dir := top
		if i%2 == 1 {
			dir = filepath.Join(wt, "sub")
		}
		procs = append(procs, startPickup(t, dir, "--owner", fmt.Sprintf("w%d", i), "--json", "work", "-j", "1", "--", "true"))
	}
	claimed := map[string]int{}
	done := map[string]int{}
	for i, p := range procs {
		if code := p.wait(); code != 0 {
			t.Fatalf("process %d: exit %d\n%s", i, code, p.stderr.String())
		}
		ev := workEvents(t, p.stdout.String())
		for _, id := range ev["claimed"] {
			claimed[id]++
		}
		for _, id := range ev["done"] {
			done[id]++
		}
	}
	for _, id := range ids {
		if claimed[id] != 1 || done[id] != 1 {
			t.Errorf("%s claimed %d times, done %d times", id, claimed[id], done[id])
		}
		if _, err := os.Stat(b.Path(sessions.Done, "", id)); err != nil {
			t.Errorf("%s is not in the main board's done/", id)
		}
		if _, err := os.Stat(filepath.Join(wt, DefaultBoardDir, "todo", id+".md")); err != nil {
			t.Errorf("the worktree's checkout of %s changed: %v", id, err)
		}
	}
	if len(claimed) != n || len(done) != n {
		t.Errorf("%d claimed, %d done, want %d", len(claimed), len(done), n)
	}
	ops := countOps(t, b)
	for _, id := range ids {
		if ops[id]["next"] != 1 || ops[id]["done"] != 1 {
			t.Errorf("event log for %s: %v", id, ops[id])
		}
	}
	if _, err := os.Stat(filepath.Join(wt, DefaultBoardDir, "doing")); err == nil {
		entries, _ := os.ReadDir(filepath.Join(wt, DefaultBoardDir, "doing"))
		if len(entries) > 0 {
			t.Errorf("the worktree grew its own board: %v", entries)
		}
	}
}

// 8 pickup processes in commit mode drain a board: every transition is
// committed exactly once, each commit holds only its session's paths and
// the event log, no git error surfaces, and the user's staged file stays
// staged.
func TestGitCommitModeConcurrent(t *testing.T) {
	requireWired(t)
	const n = 16
	top, b, ids := gitRepoWithBoard(t, n)
	os.WriteFile(filepath.Join(top, "notes.txt"), []byte("the user's\n"), 0o644)
	gitIn(t, top, "add", "notes.txt")
	os.WriteFile(filepath.Join(top, "README"), []byte("edited, not staged\n"), 0o644)
	var procs []*pickupProc
	for i := range 8 {
		procs = append(procs, startPickup(t, top, "--commit", "--owner", fmt.Sprintf("c%d", i), "--json", "work", "-j", "1", "--", "true"))
	}
	for i, p := range procs {
		code := p.wait()
		if code != 0 || strings.Contains(p.stderr.String(), "pickup:") {
			t.Errorf("process %d: exit %d, stderr:\n%s", i, code, p.stderr.String())
		}
	}
	// Every commit: subject and files.
	out := gitIn(t, top, "log", "--format=%x00%s", "--name-only", "--no-renames", "HEAD~"+fmt.Sprint(2*n)+"..HEAD")
	subjects := map[string]int{}
	commits := 0
	for _, c := range strings.Split(out, "\x00")[1:] {
		commits++
		lines := nonEmptyLines(c)
		subject := lines[0]
		subjects[subject]++
		f := strings.Fields(subject) // pickup: claim ID (owner)
		if len(f) != 4 || f[0] != "pickup:" {
			t.Errorf("commit %q", subject)
			continue
		}
		id := f[2]
		for _, file := range lines[1:] {
			if file != DefaultBoardDir+"/events.log" && !strings.HasSuffix(file, "/"+id+".md") {
				t.Errorf("commit %q holds %s", subject, file)
			}
		}
	}
	if commits != 2*n {
		t.Errorf("%d commits, want %d", commits, 2*n)
	}
	for _, id := range ids {
		var claim, done int
		for s, k := range subjects {
			if strings.HasPrefix(s, "pickup: claim "+id+" (") {
				claim += k
			}
			if strings.HasPrefix(s, "pickup: done "+id+" (") {
				done += k
			}
		}
		if claim != 1 || done != 1 {
			t.Errorf("%s: %d claim commits, %d done commits", id, claim, done)
		}
	}
	if got := gitIn(t, top, "log", "--format=%s", "HEAD~"+fmt.Sprint(2*n), "-1"); strings.TrimSpace(got) != "board" {
		t.Errorf("commits other than the transitions': %q", got)
	}
	if st := gitIn(t, top, "status", "--porcelain", "--untracked-files=all"); st != " M README\nA  notes.txt\n" {
		t.Errorf("status after the run:\n%s", st)
	}
	if committed, _ := exec.Command("git", "-C", top, "show", "HEAD:"+DefaultBoardDir+"/events.log").Output(); len(committed) == 0 {
		t.Error("event log not committed")
	} else if disk, _ := os.ReadFile(b.EventLogPath()); !bytes.Equal(committed, disk) {
		t.Error("the committed event log differs from the board's")
	}
}

// A bare remote and two clones: each claims and finishes its own half of
// the sessions in commit mode and syncs after every round, both at once.
// Both end with the same history, which holds every transition.
func TestGitSyncTwoClones(t *testing.T) {
	requireWired(t)
	const n = 8
	seed, _, ids := gitRepoWithBoard(t, n)
	remote := filepath.Join(t.TempDir(), "remote.git")
	gitIn(t, seed, "clone", "-q", "--bare", seed, remote)
	clones := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	for _, c := range clones {
		gitIn(t, seed, "clone", "-q", remote, c)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 2)
	for i, dir := range clones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := []string{"ann", "bob"}[i]
			mine := ids[i*n/2 : (i+1)*n/2]
			for round := 0; round < len(mine); round += 2 {
				for _, id := range mine[round : round+2] {
					for _, op := range []string{"claim", "done"} {
						p, err := runPickup(dir, "--commit", "--owner", owner, op, id)
						if err != nil {
							errs <- err.Error()
							return
						}
						if code := p.wait(); code != 0 {
							errs <- fmt.Sprintf("%s %s %s: exit %d: %s", owner, op, id, code, p.stderr.String())
							return
						}
					}
				}
				p, err := runPickup(dir, "sync", "--backoff", "50ms", "--attempts", "20")
				if err != nil {
					errs <- err.Error()
					return
				}
				if code := p.wait(); code != 0 {
					errs <- fmt.Sprintf("%s sync: exit %d: %s", owner, code, p.stderr.String())
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	for _, dir := range clones { // the first to finish pulls the other's last round
		pickup(t, dir, "sync")
	}
	heads := []string{}
	for _, dir := range append(clones, remote) {
		heads = append(heads, strings.TrimSpace(gitIn(t, dir, "rev-parse", "main")))
	}
	if heads[0] != heads[1] || heads[1] != heads[2] {
		t.Fatalf("heads differ: %q", heads)
	}
	logs := []string{}
	for _, dir := range clones {
		if st := gitIn(t, dir, "status", "--porcelain"); st != "" {
			t.Errorf("%s not clean: %q", dir, st)
		}
		for _, d := range []string{"rebase-merge", "rebase-apply"} {
			if _, err := os.Stat(filepath.Join(dir, ".git", d)); err == nil {
				t.Errorf("%s: %s left", dir, d)
			}
		}
		b, err := sessions.Open(filepath.Join(dir, DefaultBoardDir))
		if err != nil {
			t.Fatal(err)
		}
		ops := countOps(t, b)
		for _, id := range ids {
			if ops[id]["claim"] != 1 || ops[id]["done"] != 1 {
				t.Errorf("%s: event log for %s: %v", dir, id, ops[id])
			}
			if _, err := os.Stat(b.Path(sessions.Done, "", id)); err != nil {
				t.Errorf("%s: %s not done", dir, id)
			}
		}
		data, _ := os.ReadFile(b.EventLogPath())
		logs = append(logs, string(data))
	}
	if logs[0] != logs[1] {
		t.Error("the clones' event logs differ")
	}
	// 2 commits per session, and the seed's.
	if got := len(nonEmptyLines(gitIn(t, clones[0], "log", "--format=%H"))); got != 1+2*n {
		t.Errorf("%d commits, want %d", got, 1+2*n)
	}
}
