package gitx

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// gitEnv makes git ignore the machine's configuration and gives it an
// identity.
func gitEnv(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, v := range []string{"GIT_AUTHOR", "GIT_COMMITTER"} {
		t.Setenv(v+"_NAME", "Tester")
		t.Setenv(v+"_EMAIL", "tester@example.com")
	}
}

// run runs git in dir and fails the test if it fails.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func move(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

// newRepo makes a repository with one commit holding b/todo/X.md and
// b/todo/Y.md, and returns it found by Find.
func newRepo(t *testing.T) *Repo {
	t.Helper()
	gitEnv(t)
	dir := filepath.Join(t.TempDir(), "repo")
	run(t, t.TempDir(), "init", "-q", "-b", "main", dir)
	write(t, filepath.Join(dir, "b/todo/X.md"), "x\n")
	write(t, filepath.Join(dir, "b/todo/Y.md"), "y\n")
	write(t, filepath.Join(dir, "code.go"), "package main\n")
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "init")
	r, err := Find(context.Background(), filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func TestFind(t *testing.T) {
	r := newRepo(t)
	real, _ := filepath.EvalSymlinks(filepath.Dir(filepath.Join(r.Top, "b")))
	if r.Top != real || r.GitDir != filepath.Join(real, ".git") || r.CommonDir != r.GitDir {
		t.Errorf("Find = %+v", r)
	}
	// A linked worktree has its own git directory and the main one's
	// common directory.
	wt := filepath.Join(t.TempDir(), "wt")
	run(t, r.Top, "worktree", "add", "-q", wt)
	w, err := Find(context.Background(), wt)
	if err != nil {
		t.Fatal(err)
	}
	realWT, _ := filepath.EvalSymlinks(wt)
	if w.Top != realWT || w.CommonDir != r.GitDir || w.GitDir != filepath.Join(r.GitDir, "worktrees", "wt") {
		t.Errorf("Find(worktree) = %+v", w)
	}
	_, err = Find(context.Background(), t.TempDir())
	if !errors.Is(err, ErrNotRepo) {
		t.Errorf("Find outside a repository: %v, want ErrNotRepo", err)
	}
}

func TestRel(t *testing.T) {
	r := newRepo(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(r.Top, link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(r.Top, "b/todo/X.md"):              "b/todo/X.md",
		filepath.Join(link, "b/doing/alice/X.md"):        "b/doing/alice/X.md", // missing directories
		filepath.Join(link, "b", "..", "b", "done/X.md"): "b/done/X.md",
	} {
		got, err := r.Rel(path)
		if err != nil || got != want {
			t.Errorf("Rel(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := r.Rel(t.TempDir()); err == nil {
		t.Error("Rel accepted a path outside the work tree")
	}
}

// A transition's commit holds exactly the board paths it moved: a user's
// staged changes stay staged and out of the commit, and so do other
// changes in the work tree.
func TestCommitPathsOnlyThesePaths(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	write(t, filepath.Join(r.Top, "code.go"), "package main // staged by the user\n")
	write(t, filepath.Join(r.Top, "new.go"), "package main\n")
	run(t, r.Top, "add", "code.go", "new.go")
	write(t, filepath.Join(r.Top, "unstaged.txt"), "not staged\n")
	move(t, filepath.Join(r.Top, "b/todo/Y.md"), filepath.Join(r.Top, "b/doing/bob/Y.md")) // another transition
	move(t, filepath.Join(r.Top, "b/todo/X.md"), filepath.Join(r.Top, "b/doing/alice/X.md"))
	write(t, filepath.Join(r.Top, "b/events.log"), "{}\n")

	got, err := r.CommitPaths(ctx, "pickup: claim X (alice)",
		filepath.Join(r.Top, "b/todo/X.md"), filepath.Join(r.Top, "b/doing/alice/X.md"), "b/events.log", "b/never/existed.md")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"b/doing/alice/X.md", "b/events.log", "b/todo/X.md"}; !slices.Equal(got, want) {
		t.Errorf("committed %q, want %q", got, want)
	}
	if msg := strings.TrimSpace(run(t, r.Top, "log", "-1", "--format=%s")); msg != "pickup: claim X (alice)" {
		t.Errorf("message %q", msg)
	}
	files := lines(run(t, r.Top, "show", "--name-status", "--format=", "--no-renames", "HEAD"))
	want := []string{"A\tb/doing/alice/X.md", "A\tb/events.log", "D\tb/todo/X.md"}
	if !slices.Equal(files, want) {
		t.Errorf("commit holds %q, want %q", files, want)
	}
	staged := lines(run(t, r.Top, "diff", "--cached", "--name-only"))
	if !slices.Equal(staged, []string{"code.go", "new.go"}) {
		t.Errorf("staged after the commit: %q, want the user's code.go and new.go", staged)
	}
	status := run(t, r.Top, "status", "--porcelain", "--untracked-files=all")
	for _, l := range []string{"M  code.go", "A  new.go", "?? unstaged.txt", " D b/todo/Y.md", "?? b/doing/bob/Y.md"} {
		if !strings.Contains(status, l+"\n") {
			t.Errorf("status lacks %q:\n%s", l, status)
		}
	}
	// Nothing left to commit for these paths: no commit, no error.
	head := r.Head(ctx)
	got, err = r.CommitPaths(ctx, "again", filepath.Join(r.Top, "b/todo/X.md"), filepath.Join(r.Top, "b/doing/alice/X.md"))
	if err != nil || got != nil || r.Head(ctx) != head {
		t.Errorf("second commit: %q, %v (HEAD moved: %v)", got, err, r.Head(ctx) != head)
	}
	if got, err := r.CommitPaths(ctx, "none"); err != nil || got != nil {
		t.Errorf("no paths: %q, %v", got, err)
	}
}

// A file that came and went before anything was committed, and one whose
// deletion is already staged, are handled without git errors.
func TestCommitPathsOddStates(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	tmp := filepath.Join(r.Top, "b/doing/a/Z.md")
	write(t, tmp, "z\n")
	run(t, r.Top, "add", "b/doing/a/Z.md")
	os.Remove(tmp)                           // "AD"
	run(t, r.Top, "rm", "-q", "b/todo/Y.md") // "D "
	got, err := r.CommitPaths(ctx, "odd", tmp, filepath.Join(r.Top, "b/todo/Y.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"b/todo/Y.md"}) {
		t.Errorf("committed %q, want only the deletion of b/todo/Y.md", got)
	}
	if s := run(t, r.Top, "status", "--porcelain"); s != "" {
		t.Errorf("left behind: %q", s)
	}
	// A whole directory as pathspec: every change under it.
	move(t, filepath.Join(r.Top, "b/todo/X.md"), filepath.Join(r.Top, "b/done/X.md"))
	got, err = r.CommitPaths(ctx, "dir", filepath.Join(r.Top, "b"))
	if err != nil || len(got) != 2 {
		t.Errorf("directory commit: %q, %v", got, err)
	}
}

func TestCommitPathsStaleIndexLock(t *testing.T) {
	r := newRepo(t)
	lock := filepath.Join(r.GitDir, "index.lock")
	write(t, lock, "")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(lock, old, old)
	move(t, filepath.Join(r.Top, "b/todo/X.md"), filepath.Join(r.Top, "b/done/X.md"))
	// Counted, not timed: a stale lock is reported without one pause.
	var waited time.Duration
	r.Sleep = func(ctx context.Context, d time.Duration) error { waited += d; return nil }
	_, err := r.CommitPaths(context.Background(), "m", filepath.Join(r.Top, "b"))
	var le *IndexLockError
	if !errors.As(err, &le) || !errors.Is(err, ErrIndexLocked) || !le.Stale || le.Path != lock {
		t.Fatalf("err = %v, want a stale *IndexLockError for %s", err, lock)
	}
	if waited > 0 {
		t.Errorf("a stale lock was waited for (%s of pauses)", waited)
	}
	if !strings.Contains(le.Hint(), "check `ps`") || !strings.Contains(le.Hint(), lock) || !strings.Contains(err.Error(), "crashed") {
		t.Errorf("message %q, hint %q", err, le.Hint())
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("the lock file was removed: %v", err)
	}
}

func TestCommitPathsWaitsForAnotherGit(t *testing.T) {
	r := newRepo(t)
	r.LockWait = 10 * time.Second
	lock := filepath.Join(r.GitDir, "index.lock")
	write(t, lock, "")
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.Remove(lock)
	}()
	move(t, filepath.Join(r.Top, "b/todo/X.md"), filepath.Join(r.Top, "b/done/X.md"))
	got, err := r.CommitPaths(context.Background(), "m", filepath.Join(r.Top, "b"))
	if err != nil || len(got) != 2 {
		t.Fatalf("commit after the other git finished: %q, %v", got, err)
	}

	// One that stays past the wait is reported, not stale.
	r.LockWait = 200 * time.Millisecond
	write(t, lock, "")
	move(t, filepath.Join(r.Top, "b/todo/Y.md"), filepath.Join(r.Top, "b/done/Y.md"))
	_, err = r.CommitPaths(context.Background(), "m", filepath.Join(r.Top, "b"))
	var le *IndexLockError
	if !errors.As(err, &le) || le.Stale || !strings.Contains(err.Error(), "another git process") {
		t.Fatalf("err = %v, want a fresh *IndexLockError", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("the lock file was removed: %v", err)
	}
}

func TestCommitPathsRefusesDuringRebase(t *testing.T) {
	r := newRepo(t)
	os.Mkdir(filepath.Join(r.GitDir, "rebase-merge"), 0o755)
	move(t, filepath.Join(r.Top, "b/todo/X.md"), filepath.Join(r.Top, "b/done/X.md"))
	if _, err := r.CommitPaths(context.Background(), "m", filepath.Join(r.Top, "b")); !errors.Is(err, ErrRebaseInProgress) {
		t.Fatalf("err = %v, want ErrRebaseInProgress", err)
	}
}
