package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	s := time.Second
	for _, tt := range []struct {
		retry int
		r     float64
		want  time.Duration
	}{
		{1, 0.5, s}, {2, 0.5, 2 * s}, {3, 0.5, 4 * s}, {4, 0.5, 8 * s}, {5, 0.5, 16 * s},
		{1, 0, 750 * time.Millisecond}, {4, 0, 6 * s},
		{1, 0.99, 1245 * time.Millisecond}, {2, 1, 2500 * time.Millisecond},
		{7, 0.5, time.Minute}, {40, 0.5, time.Minute}, // capped
	} {
		if got := Backoff(s, time.Minute, tt.retry, tt.r); got.Round(time.Microsecond) != tt.want {
			t.Errorf("Backoff(1s, 1m, %d, %v) = %s, want %s", tt.retry, tt.r, got, tt.want)
		}
	}
}

// fakeSleep records the pauses instead of sleeping.
type fakeSleep struct {
	mu     sync.Mutex
	pauses []time.Duration
}

func (f *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.pauses = append(f.pauses, d)
	f.mu.Unlock()
	return ctx.Err()
}

// A remote that cannot be reached: every attempt fails; the pauses follow
// the schedule exactly, and the error says what happened each time.
func TestSyncBackoffSchedule(t *testing.T) {
	r := newRepo(t)
	run(t, r.Top, "remote", "add", "origin", filepath.Join(t.TempDir(), "missing.git"))
	for _, tt := range []struct {
		name     string
		attempts int
		delay    time.Duration
		rand     float64
		want     []time.Duration
	}{
		{"defaults", 0, 0, 0.5, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}},
		{"high jitter", 0, 0, 0.75, []time.Duration{1125 * time.Millisecond, 2250 * time.Millisecond, 4500 * time.Millisecond, 9 * time.Second}},
		{"three attempts", 3, 100 * time.Millisecond, 0.5, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeSleep{}
			s := &Syncer{Repo: r, Attempts: tt.attempts, Delay: tt.delay, Sleep: f.sleep, Rand: func() float64 { return tt.rand }}
			res, err := s.Sync(context.Background())
			if !slices.Equal(f.pauses, tt.want) {
				t.Errorf("pauses %v, want %v", f.pauses, tt.want)
			}
			var se *SyncError
			if !errors.As(err, &se) || !errors.Is(err, ErrSyncFailed) {
				t.Fatalf("err = %v, want a *SyncError", err)
			}
			n := len(tt.want) + 1
			if se.Attempts != n || len(se.Failures) != n || res.Attempts != n {
				t.Errorf("attempts %d, failures %d, want %d", se.Attempts, len(se.Failures), n)
			}
			msg := err.Error()
			for _, want := range []string{fmt.Sprintf("after %d attempt(s)", n), fmt.Sprintf("attempt %d: pull --rebase from origin main failed", n), "missing.git", "nothing was lost"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message lacks %q: %s", want, msg)
				}
			}
		})
	}
}

// remoteAndClones makes a bare remote holding one commit (a board with
// sessions X and Y, the union attribute for its event log, and code.go)
// and two clones of it.
func remoteAndClones(t *testing.T) (remote string, a, b *Repo) {
	t.Helper()
	seed := newRepo(t)
	write(t, filepath.Join(seed.Top, "b/.gitattributes"), "/events.log merge=union\n")
	write(t, filepath.Join(seed.Top, "b/events.log"), `{"n":0}`+"\n")
	run(t, seed.Top, "add", "-A")
	run(t, seed.Top, "commit", "-q", "-m", "board")
	remote = filepath.Join(t.TempDir(), "remote.git")
	run(t, seed.Top, "clone", "-q", "--bare", seed.Top, remote)
	clone := func(name string) *Repo {
		dir := filepath.Join(t.TempDir(), name)
		run(t, seed.Top, "clone", "-q", remote, dir)
		r, err := Find(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	return remote, clone("a"), clone("b")
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	if err := appendTo(path, line); err != nil {
		t.Fatal(err)
	}
}

func appendTo(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Both clones move different sessions and append to the event log; after
// syncing both have the same history, and the log holds every line.
func TestSyncMergesEventLog(t *testing.T) {
	_, a, b := remoteAndClones(t)
	ctx := context.Background()
	step := func(r *Repo, session, line string) {
		move(t, filepath.Join(r.Top, "b/todo", session), filepath.Join(r.Top, "b/done", session))
		appendLine(t, filepath.Join(r.Top, "b/events.log"), line)
		if _, err := r.CommitPaths(ctx, "pickup: done "+session, filepath.Join(r.Top, "b")); err != nil {
			t.Fatal(err)
		}
	}
	step(a, "X.md", `{"n":"a"}`)
	step(b, "Y.md", `{"n":"b"}`)
	for _, r := range []*Repo{a, b, a} {
		res, err := (&Syncer{Repo: r, Sleep: (&fakeSleep{}).sleep}).Sync(ctx)
		if err != nil {
			t.Fatalf("sync %s: %v", r.Top, err)
		}
		if res.Remote != "origin" || res.Branch != "main" || res.Attempts != 1 {
			t.Errorf("result %+v", res)
		}
	}
	if ha, hb := a.Head(ctx), b.Head(ctx); ha != hb {
		t.Fatalf("heads differ: %s %s", ha, hb)
	}
	data, _ := os.ReadFile(filepath.Join(a.Top, "b/events.log"))
	if got := lines(string(data)); !slices.Equal(got, []string{`{"n":0}`, `{"n":"a"}`, `{"n":"b"}`}) {
		t.Errorf("event log %q", got)
	}
	for _, f := range []string{"b/done/X.md", "b/done/Y.md"} {
		if _, err := os.Stat(filepath.Join(b.Top, f)); err != nil {
			t.Error(err)
		}
	}
}

// A conflict stops the rebase: it is aborted at once, not retried, the
// clone keeps its commit and no rebase is left in progress.
func TestSyncConflictAborts(t *testing.T) {
	_, a, b := remoteAndClones(t)
	ctx := context.Background()
	for _, r := range []*Repo{a, b} {
		write(t, filepath.Join(r.Top, "code.go"), "package main // "+filepath.Base(r.Top)+"\n")
		run(t, r.Top, "commit", "-q", "-am", "edit in "+filepath.Base(r.Top))
	}
	if _, err := (&Syncer{Repo: a}).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	before := b.Head(ctx)
	f := &fakeSleep{}
	_, err := (&Syncer{Repo: b, Sleep: f.sleep}).Sync(ctx)
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) || !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("err = %v, want a conflict", err)
	}
	if !slices.Equal(ce.Paths, []string{"code.go"}) {
		t.Errorf("conflict paths %q", ce.Paths)
	}
	if len(f.pauses) != 0 {
		t.Errorf("a conflict was retried: pauses %v", f.pauses)
	}
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(b.GitDir, d)); err == nil {
			t.Errorf("%s left behind", d)
		}
	}
	if b.Head(ctx) != before {
		t.Error("HEAD moved")
	}
	if s := run(t, b.Top, "status", "--porcelain"); s != "" {
		t.Errorf("work tree not clean: %q", s)
	}
	if !strings.Contains(err.Error(), "nothing was lost") || !strings.Contains(err.Error(), "code.go") {
		t.Errorf("message: %v", err)
	}
	var h interface{ Hint() string }
	if !errors.As(err, &h) || !strings.Contains(h.Hint(), "git pull --rebase") {
		t.Errorf("no useful hint for %v", err)
	}
}

// Someone pushes between our pull and our push: the push is rejected, and
// the next attempt rebases onto their commit and pushes.
func TestSyncRetriesRejectedPush(t *testing.T) {
	_, a, b := remoteAndClones(t)
	ctx := context.Background()
	write(t, filepath.Join(a.Top, "a.txt"), "a\n")
	run(t, a.Top, "add", "a.txt")
	run(t, a.Top, "commit", "-q", "-m", "a")
	write(t, filepath.Join(b.Top, "b.txt"), "b\n")
	run(t, b.Top, "add", "b.txt")
	run(t, b.Top, "commit", "-q", "-m", "b")
	// b's first push runs a hook that makes a push first.
	mark := filepath.Join(t.TempDir(), "pushed")
	hook := fmt.Sprintf("#!/bin/sh\nif [ ! -e %q ]; then\n  touch %q\n  unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE\n  git -C %q push -q origin main || exit 1\nfi\n", mark, mark, a.Top)
	write(t, filepath.Join(b.GitDir, "hooks/pre-push"), hook)
	os.Chmod(filepath.Join(b.GitDir, "hooks/pre-push"), 0o755)
	f := &fakeSleep{}
	var logged []string
	res, err := (&Syncer{Repo: b, Sleep: f.sleep, Rand: func() float64 { return 0.5 },
		Logf: func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }}).Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Attempts != 2 || !res.Pushed || len(res.Failures) != 1 || !slices.Equal(f.pauses, []time.Duration{time.Second}) {
		t.Errorf("result %+v, pauses %v", res, f.pauses)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "attempt 1 of 5 failed: push to origin main") {
		t.Errorf("logged %q", logged)
	}
	log := lines(run(t, b.Top, "log", "--format=%s", "origin/main"))
	if !slices.Equal(log[:3], []string{"b", "a", "board"}) {
		t.Errorf("remote history %q", log)
	}
}

func TestSyncFirstPushCreatesBranch(t *testing.T) {
	r := newRepo(t)
	remote := filepath.Join(t.TempDir(), "empty.git")
	run(t, r.Top, "init", "-q", "--bare", remote)
	run(t, r.Top, "remote", "add", "origin", remote)
	res, err := (&Syncer{Repo: r}).Sync(context.Background())
	if err != nil || !res.Pushed || res.Attempts != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	if got := strings.TrimSpace(run(t, remote, "rev-parse", "main")); got != r.Head(context.Background()) {
		t.Errorf("remote main = %s", got)
	}
}

func TestSyncRefusals(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	if _, err := (&Syncer{Repo: r}).Sync(ctx); !errors.Is(err, ErrNoRemote) || !errors.Is(err, ErrSyncFailed) {
		t.Errorf("no remote: %v", err)
	}
	run(t, r.Top, "remote", "add", "origin", filepath.Join(t.TempDir(), "x.git"))
	// A rebase the user has in progress is never aborted for them.
	dir := filepath.Join(r.GitDir, "rebase-merge")
	os.Mkdir(dir, 0o755)
	f := &fakeSleep{}
	if _, err := (&Syncer{Repo: r, Sleep: f.sleep}).Sync(ctx); !errors.Is(err, ErrRebaseInProgress) || len(f.pauses) != 0 {
		t.Errorf("rebase in progress: %v (pauses %v)", err, f.pauses)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Error("the user's rebase was touched")
	}
	os.Remove(dir)
	// A stale index.lock is not waited out, nor retried.
	lock := filepath.Join(r.GitDir, "index.lock")
	write(t, lock, "")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(lock, old, old)
	var le *IndexLockError
	if _, err := (&Syncer{Repo: r, Sleep: f.sleep}).Sync(ctx); !errors.As(err, &le) || !le.Stale || len(f.pauses) != 0 {
		t.Errorf("stale index.lock: %v (pauses %v)", err, f.pauses)
	}
	os.Remove(lock)
	run(t, r.Top, "checkout", "-q", "--detach")
	if _, err := (&Syncer{Repo: r}).Sync(ctx); !errors.Is(err, ErrDetachedHead) || !strings.HasPrefix(err.Error(), "sync failed before its first attempt: HEAD is detached") {
		t.Errorf("detached: %v", err)
	}
}

// Two clones commit and sync at the same time, round after round; both
// end with the same history, which holds every commit and every line.
func TestSyncConcurrentClones(t *testing.T) {
	remote, a, b := remoteAndClones(t)
	ctx := context.Background()
	const rounds = 3
	for _, r := range []*Repo{a, b} {
		os.MkdirAll(filepath.Join(r.Top, "b/done"), 0o755)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*rounds+2)
	for i, r := range []*Repo{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := string(rune('a' + i))
			for n := range rounds {
				file := filepath.Join(r.Top, "b/done", fmt.Sprintf("%s-%d.md", name, n))
				if err := os.WriteFile(file, []byte(name+"\n"), 0o644); err != nil {
					errs <- err
					return
				}
				if err := appendTo(filepath.Join(r.Top, "b/events.log"), fmt.Sprintf(`{"n":"%s-%d"}`, name, n)); err != nil {
					errs <- err
					return
				}
				if _, err := r.CommitPaths(ctx, "pickup: "+name, filepath.Join(r.Top, "b")); err != nil {
					errs <- err
					return
				}
				s := &Syncer{Repo: r, Attempts: 20, Delay: 20 * time.Millisecond, MaxDelay: 200 * time.Millisecond}
				if _, err := s.Sync(ctx); err != nil {
					errs <- fmt.Errorf("%s round %d: %w", name, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, r := range []*Repo{a, b} { // whoever synced first pulls the rest
		if _, err := (&Syncer{Repo: r}).Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ha, hb := a.Head(ctx), b.Head(ctx)
	if ha != hb || strings.TrimSpace(run(t, remote, "rev-parse", "main")) != ha {
		t.Fatalf("heads differ: a %s, b %s", ha, hb)
	}
	if n := len(lines(run(t, a.Top, "log", "--format=%H"))); n != 2+2*rounds {
		t.Errorf("%d commits, want %d", n, 2+2*rounds)
	}
	data, _ := os.ReadFile(filepath.Join(b.Top, "b/events.log"))
	got := lines(string(data))
	if len(got) != 1+2*rounds {
		t.Errorf("event log has %d lines, want %d: %q", len(got), 1+2*rounds, got)
	}
	for _, r := range []*Repo{a, b} {
		if s := run(t, r.Top, "status", "--porcelain"); s != "" || r.RebaseInProgress() {
			t.Errorf("%s not clean: %q", r.Top, s)
		}
	}
}
