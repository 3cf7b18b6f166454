package sessions_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// session renders a session file by hand.
func session(prio, created, title string) string {
	return fmt.Sprintf("---\npriority: %s\ncreated_at: %s\ntitle: %q\n---\nbody\n", prio, created, title)
}

func TestListOrder(t *testing.T) {
	b := testBoard(t)
	files := map[string]string{
		"todo/c.md":  session("low", "2026-01-01T00:00:00Z", "low, oldest"),
		"todo/d.md":  session("high", "2026-03-01T00:00:00Z", "high, newest"),
		"todo/e.md":  session("high", "2026-02-01T00:00:00Z", "high, older"),
		"todo/b2.md": session("medium", "2026-02-01T00:00:00Z", "medium, same time, id b2"),
		"todo/b1.md": session("medium", "2026-02-01T00:00:00Z", "medium, same time, id b1"),
		"todo/a.md":  session("medium", "2026-02-02T00:00:00Z", "medium, later"),
	}
	for p, c := range files {
		put(t, b, p, c)
	}
	want := []string{"e", "d", "b1", "b2", "a", "c"}
	for _, validate := range []bool{true, false} {
		for round := range 2 { // the second round comes from the cache
			list, err := b.ListState(sessions.Todo, validate)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(list); !slices.Equal(got, want) {
				t.Errorf("ListState(todo, %v) round %d = %q, want %q", validate, round, got, want)
			}
		}
	}
}

func TestCompare(t *testing.T) {
	t1, t2 := utc("2026-01-01T00:00:00Z"), utc("2026-01-02T00:00:00Z")
	s := func(id string, p sessions.Priority, at time.Time) sessions.Session {
		return sessions.Session{ID: id, Meta: sessions.Meta{Priority: p, CreatedAt: at}}
	}
	tests := []struct {
		name string
		a, b sessions.Session
		want int
	}{
		{name: "priority first", a: s("z", sessions.High, t2), b: s("a", sessions.Low, t1), want: -1},
		{name: "priority reversed", a: s("a", sessions.Low, t1), b: s("z", sessions.Medium, t2), want: 1},
		{name: "then created_at", a: s("z", sessions.Medium, t1), b: s("a", sessions.Medium, t2), want: -1},
		{name: "then id", a: s("a", sessions.Medium, t1), b: s("b", sessions.Medium, t1), want: -1},
		{name: "equal", a: s("a", sessions.Medium, t1), b: s("a", sessions.Medium, t1), want: 0},
		{name: "same instant in another zone", a: s("b", sessions.Medium, t1.In(time.FixedZone("X", 7200))), b: s("a", sessions.Medium, t1), want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sessions.Compare(tt.a, tt.b); got != tt.want {
				t.Errorf("Compare = %d, want %d", got, tt.want)
			}
			if got := sessions.Compare(tt.b, tt.a); got != -tt.want {
				t.Errorf("Compare reversed = %d, want %d", got, -tt.want)
			}
		})
	}
}

func TestListStates(t *testing.T) {
	b := testBoard(t)
	put(t, b, "todo/t1.md", session("low", "2026-01-01T00:00:00Z", "t1"))
	put(t, b, "todo/t2.md", session("high", "2026-01-01T00:00:00Z", "t2"))
	put(t, b, "doing/alice/a1.md", session("low", "2026-01-01T00:00:00Z", "a1"))
	put(t, b, "doing/bob/b1.md", session("high", "2026-01-01T00:00:00Z", "b1"))
	put(t, b, "done/d1.md", session("medium", "2026-01-01T00:00:00Z", "d1"))
	if err := os.Mkdir(filepath.Join(b.Dir, "doing", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		states []sessions.State
		want   []string // id@state/owner
	}{
		{name: "all", want: []string{"t2@todo/", "t1@todo/", "b1@doing/bob", "a1@doing/alice", "d1@done/"}},
		{name: "todo", states: []sessions.State{sessions.Todo}, want: []string{"t2@todo/", "t1@todo/"}},
		{name: "doing", states: []sessions.State{sessions.Doing}, want: []string{"b1@doing/bob", "a1@doing/alice"}},
		{name: "done and todo", states: []sessions.State{sessions.Done, sessions.Todo}, want: []string{"d1@done/", "t2@todo/", "t1@todo/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := b.List(tt.states...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range list {
				got = append(got, s.ID+"@"+string(s.State)+"/"+s.Owner)
				if want := b.Path(s.State, s.Owner, s.ID); s.Path != want {
					t.Errorf("%s: Path = %q, want %q", s.ID, s.Path, want)
				}
				if s.Title != s.ID {
					t.Errorf("%s: Title = %q", s.ID, s.Title)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("List(%v) = %q, want %q", tt.states, got, tt.want)
			}
		})
	}
	owned, err := b.ListOwner("alice")
	if err != nil || !slices.Equal(ids(owned), []string{"a1"}) {
		t.Errorf("ListOwner(alice) = %q, %v; want [a1]", ids(owned), err)
	}
	if none, err := b.ListOwner("nobody"); err != nil || len(none) != 0 {
		t.Errorf("ListOwner(nobody) = %q, %v; want nothing and no error", ids(none), err)
	}
}

// TestListSkipsNonSessions checks that only regular files named <id>.md
// are listed.
func TestListSkipsNonSessions(t *testing.T) {
	b := testBoard(t)
	content := session("high", "2026-01-01T00:00:00Z", "x")
	put(t, b, "todo/real.md", content)
	put(t, b, "done/real2.md", content)
	for _, name := range []string{
		".hidden.md",                     // dotfile
		".real.md123456789",              // WriteNew's temporary file
		".real.md",                       // dotfile named like a session
		"notes.txt",                      // not .md
		"README",                         // no extension
		"real.md~",                       // editor backup
		"real.MD",                        // wrong case
		".md",                            // empty id
		"-dash.md",                       // invalid id
		"with space.md",                  // invalid id
		"caf\u00e9.md",                   // invalid id
		strings.Repeat("a", 129) + ".md", // too long
	} {
		put(t, b, "todo/"+name, content)
	}
	if err := os.Mkdir(filepath.Join(b.Dir, "todo", "dir.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	put(t, b, "todo/dir.md/inner.md", content)
	if err := os.Symlink(filepath.Join(b.Dir, "done", "real2.md"), filepath.Join(b.Dir, "todo", "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere.md", filepath.Join(b.Dir, "todo", "dangling.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(b.Dir, "todo", "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A symlinked owner directory is not an owner.
	if err := os.Symlink(filepath.Join(b.Dir, "todo"), filepath.Join(b.Dir, "doing", "mallory")); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		list, err := b.List()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(list), []string{"real", "real2"}; !slices.Equal(got, want) {
			t.Errorf("round %d: List = %q, want %q", round, got, want)
		}
	}
}

// A missing state directory (a clone drops empty ones, and Open no longer
// makes them) reads as empty.
func TestListMissingStateDir(t *testing.T) {
	b := testBoard(t)
	if err := os.Remove(filepath.Join(b.Dir, "done")); err != nil {
		t.Fatal(err)
	}
	if list, err := b.List(sessions.Done); err != nil || len(list) != 0 {
		t.Errorf("List(done) without done/ = %v, %v; want nothing", list, err)
	}
	if _, err := b.List(sessions.Todo); err != nil {
		t.Errorf("List(todo) = %v", err)
	}
}

func TestListBrokenFrontmatter(t *testing.T) {
	b := testBoard(t)
	p := put(t, b, "todo/broken.md", "---\ntitle: ok\npriority: urgent\n---\n")
	if err := os.Chtimes(p, time.Time{}, utc("2025-05-05T05:05:05Z")); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		list, err := b.List(sessions.Todo)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 {
			t.Fatalf("round %d: List = %q, want the broken session listed", round, ids(list))
		}
		s := list[0]
		if !strings.Contains(s.Problem, "line 3") || s.Priority != sessions.Medium {
			t.Errorf("round %d: Problem = %q, Priority = %v; want line 3 named and medium", round, s.Problem, s.Priority)
		}
		if !s.CreatedAt.Equal(utc("2025-05-05T05:05:05Z")) {
			t.Errorf("round %d: CreatedAt = %v, want the file's modification time", round, s.CreatedAt)
		}
	}
}

func TestRead(t *testing.T) {
	b := testBoard(t)
	content := session("low", "2026-01-01T00:00:00Z", "read me") + "more body\n"
	put(t, b, "doing/alice/x.md", content)
	s, got, err := b.Read(sessions.Place{State: sessions.Doing, Owner: "alice", Path: b.Path(sessions.Doing, "alice", "x")})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != content {
		t.Errorf("content = %q, want %q", got, content)
	}
	if s.ID != "x" || s.State != sessions.Doing || s.Owner != "alice" || s.Title != "read me" || s.Priority != sessions.Low {
		t.Errorf("Read = %+v", s)
	}
	if err := os.Symlink(b.Path(sessions.Doing, "alice", "x"), b.Path(sessions.Todo, "", "y")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Read(sessions.Place{State: sessions.Todo, Path: b.Path(sessions.Todo, "", "y")}); err == nil {
		t.Error("Read followed a symlink")
	}
	if _, _, err := b.Read(sessions.Place{State: sessions.Todo, Path: filepath.Join(b.Dir, "todo", ".y.md")}); !errors.Is(err, sessions.ErrInvalidID) {
		t.Errorf("Read(.y.md) = %v, want ErrInvalidID", err)
	}
}
