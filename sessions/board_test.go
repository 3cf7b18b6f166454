package sessions_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// boardClock is the fixed time of the board tests: ids are
// 2026-11-22_09-15-03, -2, -3...
var boardClock = time.Date(2026, 11, 22, 9, 15, 3, 123456789, time.UTC)

// testBoard initializes a board in a temporary directory with a fixed clock.
func testBoard(t *testing.T) *sessions.Board {
	t.Helper()
	b, err := sessions.Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	b.Now = func() time.Time { return boardClock }
	return b
}

// put writes content at <board>/rel, creating directories.
func put(t *testing.T, b *sessions.Board, rel, content string) string {
	t.Helper()
	p := filepath.Join(b.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func ids(list []sessions.Session) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.ID
	}
	return out
}

func TestInit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b", "board")
	b, err := sessions.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.Dir != dir {
		t.Errorf("Dir = %q, want %q", b.Dir, dir)
	}
	for _, sub := range []string{"todo", "doing", "done", ".pickup"} {
		if info, err := os.Stat(filepath.Join(dir, sub)); err != nil || !info.IsDir() {
			t.Errorf("%s: not a directory after Init: %v", sub, err)
		}
	}
	ignore := filepath.Join(dir, ".pickup", ".gitignore")
	if got := mustRead(t, ignore); !strings.Contains(got, "\n*\n") {
		t.Errorf(".pickup/.gitignore = %q, want it to ignore everything", got)
	}

	// Files of every kind survive a second Init.
	session := put(t, b, "todo/2026-01-01_00-00-00.md", "---\ntitle: keep\n---\n")
	claimed := put(t, b, "doing/alice/2026-01-01_00-00-01.md", "claimed\n")
	if err := os.WriteFile(ignore, []byte("# edited by hand\n*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b2, err := sessions.Init(dir)
	if err != nil {
		t.Fatalf("second Init: %v", err)
	}
	if b2.Dir != b.Dir {
		t.Errorf("second Init Dir = %q, want %q", b2.Dir, b.Dir)
	}
	for path, want := range map[string]string{
		session: "---\ntitle: keep\n---\n",
		claimed: "claimed\n",
		ignore:  "# edited by hand\n*\n",
	} {
		if got := mustRead(t, path); got != want {
			t.Errorf("%s after a second Init = %q, want %q", path, got, want)
		}
	}
}

func TestInitCompletesPartialBoard(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "todo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := sessions.Open(dir); !errors.Is(err, sessions.ErrNoBoard) {
		t.Fatalf("Open(partial board) = %v, want ErrNoBoard", err)
	}
	if _, err := sessions.Init(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := sessions.Open(dir); err != nil {
		t.Fatalf("Open after Init: %v", err)
	}
}

func TestInitOnAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sessions.Init(file); err == nil {
		t.Fatal("Init on a regular file succeeded")
	}
}

func TestOpen(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		wantErr error
	}{
		{name: "board", setup: func(t *testing.T, dir string) {
			if _, err := sessions.Init(dir); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "board without .pickup", setup: func(t *testing.T, dir string) {
			for _, s := range []string{"todo", "doing", "done"} {
				if err := os.MkdirAll(filepath.Join(dir, s), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{name: "missing directory", setup: func(t *testing.T, dir string) {
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
		}, wantErr: sessions.ErrNoBoard},
		{name: "empty directory", setup: func(*testing.T, string) {}, wantErr: sessions.ErrNoBoard},
		{name: "done missing", setup: func(t *testing.T, dir string) {
			for _, s := range []string{"todo", "doing"} {
				if err := os.MkdirAll(filepath.Join(dir, s), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}, wantErr: sessions.ErrNoBoard},
		{name: "todo is a file", setup: func(t *testing.T, dir string) {
			for _, s := range []string{"doing", "done"} {
				if err := os.MkdirAll(filepath.Join(dir, s), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "todo"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, wantErr: sessions.ErrNoBoard},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "board")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			tt.setup(t, dir)
			b, err := sessions.Open(dir)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Open = %v, want an error matching %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), dir) {
					t.Errorf("error %q does not name %s", err, dir)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if b.Dir != dir {
				t.Errorf("Dir = %q, want %q", b.Dir, dir)
			}
		})
	}
}

func TestOpenRelative(t *testing.T) {
	dir := t.TempDir()
	if _, err := sessions.Init(filepath.Join(dir, "board")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	b, err := sessions.Open("board")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(b.Dir) {
		t.Errorf("Dir = %q, want an absolute path", b.Dir)
	}
}

func TestStatesIsFreshEachCall(t *testing.T) {
	s := sessions.States()
	if want := []sessions.State{sessions.Todo, sessions.Doing, sessions.Done}; !slices.Equal(s, want) {
		t.Fatalf("States() = %v, want %v", s, want)
	}
	s[0] = sessions.Done // a caller's change stays its own
	if got := sessions.States()[0]; got != sessions.Todo {
		t.Fatalf("after changing a returned slice, States()[0] = %q, want todo", got)
	}
}
