package sessions_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pickup-dev/pickup/sessions"
)

func TestLocate(t *testing.T) {
	const id = "2026-01-01_00-00-00"
	tests := []struct {
		name  string
		files []string // relative to the board
		links []string // symlinks to a session file
		dirs  []string
		want  []string // "state/owner"
	}{
		{name: "nowhere"},
		{name: "todo", files: []string{"todo/" + id + ".md"}, want: []string{"todo/"}},
		{name: "doing", files: []string{"doing/alice/" + id + ".md"}, want: []string{"doing/alice"}},
		{name: "done", files: []string{"done/" + id + ".md"}, want: []string{"done/"}},
		{
			name:  "everywhere",
			files: []string{"todo/" + id + ".md", "doing/alice/" + id + ".md", "doing/bob/" + id + ".md", "done/" + id + ".md"},
			want:  []string{"todo/", "doing/alice", "doing/bob", "done/"},
		},
		{name: "another id", files: []string{"todo/" + id + "-2.md", "todo/" + id + ".md.bak", "todo/." + id + ".md"}},
		{name: "symlink is not a session", links: []string{"todo/" + id + ".md"}},
		{name: "directory is not a session", dirs: []string{"done/" + id + ".md"}},
		{name: "invalid owner directory", files: []string{"doing/.hidden/" + id + ".md", "doing/-x/" + id + ".md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := testBoard(t)
			for _, f := range tt.files {
				put(t, b, f, "---\ntitle: x\n---\n")
			}
			target := put(t, b, "elsewhere.md", "---\ntitle: target\n---\n")
			for _, l := range tt.links {
				if err := os.Symlink(target, filepath.Join(b.Dir, l)); err != nil {
					t.Fatal(err)
				}
			}
			for _, d := range tt.dirs {
				if err := os.MkdirAll(filepath.Join(b.Dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			places, err := b.Locate(id)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range places {
				got = append(got, string(p.State)+"/"+p.Owner)
				if want := b.Path(p.State, p.Owner, id); p.Path != want {
					t.Errorf("place %s/%s: Path = %q, want %q", p.State, p.Owner, p.Path, want)
				}
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(got, want) {
				t.Errorf("Locate = %q, want %q", got, want)
			}
		})
	}
}

func TestLocateInvalidID(t *testing.T) {
	b := testBoard(t)
	for _, id := range []string{"", "../todo/x", ".x", "a/b"} {
		if _, err := b.Locate(id); !errors.Is(err, sessions.ErrInvalidID) {
			t.Errorf("Locate(%q) = %v, want ErrInvalidID", id, err)
		}
	}
}

func TestOwners(t *testing.T) {
	b := testBoard(t)
	for _, d := range []string{"alice", "bob.2", "0f8fad5b-d9cb", ".hidden", "-dash", "with space"} {
		if err := os.MkdirAll(filepath.Join(b.Dir, "doing", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	put(t, b, "doing/carol", "a file, not an owner\n")
	put(t, b, "doing/x.md", "a session dropped in doing/ itself\n")
	if err := os.Symlink(filepath.Join(b.Dir, "doing", "alice"), filepath.Join(b.Dir, "doing", "mallory")); err != nil {
		t.Fatal(err)
	}
	got, err := b.Owners()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{"0f8fad5b-d9cb", "alice", "bob.2"}
	if !slices.Equal(got, want) {
		t.Errorf("Owners = %q, want %q", got, want)
	}
}

func TestPaths(t *testing.T) {
	b := &sessions.Board{Dir: "/b"}
	tests := []struct {
		name  string
		state sessions.State
		owner string
		want  string
	}{
		{name: "todo", state: sessions.Todo, want: "/b/todo/x.md"},
		{name: "todo ignores owner", state: sessions.Todo, owner: "alice", want: "/b/todo/x.md"},
		{name: "doing", state: sessions.Doing, owner: "alice", want: "/b/doing/alice/x.md"},
		{name: "done", state: sessions.Done, want: "/b/done/x.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := b.Path(tt.state, tt.owner, "x"); got != filepath.FromSlash(tt.want) {
				t.Errorf("Path = %q, want %q", got, tt.want)
			}
		})
	}
	if got := b.RuntimeDir(); got != filepath.FromSlash("/b/.pickup") {
		t.Errorf("RuntimeDir = %q", got)
	}
}

func TestParseState(t *testing.T) {
	for _, st := range sessions.States() {
		if got, err := sessions.ParseState(string(st)); err != nil || got != st {
			t.Errorf("ParseState(%q) = %q, %v", st, got, err)
		}
	}
	for _, bad := range []string{"", "TODO", "doing/", "finished"} {
		if _, err := sessions.ParseState(bad); err == nil {
			t.Errorf("ParseState(%q) succeeded", bad)
		}
	}
}
