//go:build unix

package sessions_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// snapshot lists every path under dir (not following links) with its
// content, so that a test can say nothing changed there.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case d.IsDir():
			out[rel] = "dir"
		case !d.Type().IsRegular():
			out[rel] = d.Type().String()
		default:
			data, _ := os.ReadFile(p)
			out[rel] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Open refuses a board with a link (or pipe) where it keeps its own files
// and directories, names it, and changes nothing, neither in the board nor
// where the link points; Inspect opens it for doctor, and Check reports it
// and repairs nothing.
func TestOpenRefusesLinks(t *testing.T) {
	tests := []struct {
		name string
		rel  string // what becomes a link to a directory (or file) outside
		file bool   // the link points at a file
		fifo bool   // a named pipe instead of a link
	}{
		{name: "todo", rel: "todo"},
		{name: "doing", rel: "doing"},
		{name: "done", rel: "done"},
		{name: "failed", rel: "failed"},
		{name: "conflicts", rel: "conflicts"},
		{name: "runtime", rel: ".pickup"},
		{name: "cache", rel: ".pickup/cache"},
		{name: "leases", rel: ".pickup/leases"},
		{name: "locks", rel: ".pickup/locks"},
		{name: "event log", rel: "events.log", file: true},
		{name: "config", rel: "config.yaml", file: true},
		{name: "config fifo", rel: "config.yaml", fifo: true},
		{name: "event log fifo", rel: "events.log", fifo: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := testBoard(t)
			put(t, b, "todo/a.md", "---\ntitle: a\n---\n")
			outside := filepath.Join(t.TempDir(), "outside")
			put(t, &sessions.Board{Dir: outside}, "keep.md", "---\ntitle: not the board's\n---\n")
			link := filepath.Join(b.Dir, filepath.FromSlash(tt.rel))
			if err := os.RemoveAll(link); err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.fifo:
				if err := syscall.Mkfifo(link, 0o644); err != nil {
					t.Fatal(err)
				}
			case tt.file:
				if err := os.Symlink(filepath.Join(outside, "keep.md"), link); err != nil {
					t.Fatal(err)
				}
			default:
				if err := os.Symlink(outside, link); err != nil {
					t.Fatal(err)
				}
			}
			// Something Check(true) would repair on a healthy board: a
			// temporary file of an interrupted write, long stale.
			for _, st := range []string{"todo", "done"} {
				if info, err := os.Lstat(filepath.Join(b.Dir, st)); err == nil && info.IsDir() {
					tmp := put(t, b, st+"/.b.md123", "partial")
					old := time.Now().Add(-time.Hour)
					if err := os.Chtimes(tmp, old, old); err != nil {
						t.Fatal(err)
					}
				}
			}
			before, outBefore := snapshot(t, b.Dir), snapshot(t, outside)

			_, err := sessions.Open(b.Dir)
			var ue *sessions.UnsafePathError
			if !errors.Is(err, sessions.ErrUnsafePath) || !errors.As(err, &ue) || ue.Path != link {
				t.Fatalf("Open = %v, want an *UnsafePathError naming %s", err, link)
			}
			if !strings.Contains(err.Error(), link) {
				t.Errorf("error %q does not name %s", err, link)
			}
			if _, err := sessions.Init(b.Dir); !errors.Is(err, sessions.ErrUnsafePath) {
				t.Errorf("Init = %v, want ErrUnsafePath", err)
			}

			ib, err := sessions.Inspect(b.Dir)
			if err != nil || !errors.Is(ib.Unsafe(), sessions.ErrUnsafePath) {
				t.Fatalf("Inspect = %v, %v; want the board, unsafe", ib, err)
			}
			findings, err := ib.Check(true)
			if err != nil {
				t.Fatal(err)
			}
			var reported bool
			for _, f := range findings {
				if f.Path == link && f.Kind == ue.Kind() {
					reported = true
				}
				if f.Fix != "" {
					t.Errorf("Check repaired %s (%s) on a board it refuses", f.Path, f.Fix)
				}
			}
			if !reported {
				t.Errorf("Check does not report %s: %+v", link, findings)
			}
			if !sameSnapshot(before, snapshot(t, b.Dir)) || !sameSnapshot(outBefore, snapshot(t, outside)) {
				t.Errorf("something changed:\nboard %v -> %v\noutside %v -> %v", before, snapshot(t, b.Dir), outBefore, snapshot(t, outside))
			}
		})
	}
}

// Only a directory that init made is a board: all three state directories,
// or init's .gitattributes. Neither Open nor Inspect creates anything.
func TestOpenIsABoard(t *testing.T) {
	initAttrs := func(t *testing.T, dir string) {
		b, err := sessions.Init(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"todo", "doing", "done", "failed", ".pickup"} {
			if err := os.RemoveAll(filepath.Join(b.Dir, d)); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(name, content string) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name  string
		setup func(*testing.T, string)
		board bool
	}{
		{name: "a clone of a board (init's .gitattributes only)", setup: initAttrs, board: true},
		{name: "a repository's .gitattributes", setup: write(".gitattributes", "*.png binary\n")},
		{name: "a .gitattributes naming events.log", setup: write(".gitattributes", "/events.log merge=union\n")},
		{name: "an events.log", setup: write("events.log", `{"time":"2026-11-22T09:15:03Z","id":"a","to":"todo"}`+"\n")},
		{name: "a config.yaml", setup: write("config.yaml", "stale: 1h\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dir")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			tt.setup(t, dir)
			before := snapshot(t, dir)
			for name, open := range map[string]func(string) (*sessions.Board, error){"Open": sessions.Open, "Inspect": sessions.Inspect} {
				b, err := open(dir)
				switch {
				case tt.board && err != nil:
					t.Errorf("%s = %v, want the board", name, err)
				case !tt.board && !errors.Is(err, sessions.ErrNoBoard):
					t.Errorf("%s = %v, %v; want ErrNoBoard", name, b, err)
				}
				if tt.board && err == nil {
					if list, err := b.List(); err != nil || len(list) != 0 {
						t.Errorf("List of a clone's board = %v, %v", list, err)
					}
					if findings, err := b.Check(false); err != nil || len(findings) != 0 {
						t.Errorf("Check of a clone's board = %v, %v", findings, err)
					}
					if _, err := b.Owners(); err != nil {
						t.Errorf("Owners of a clone's board: %v", err)
					}
				}
			}
			if after := snapshot(t, dir); !sameSnapshot(before, after) {
				t.Errorf("opening created or changed files: %v -> %v", before, after)
			}
		})
	}
}

// CheckDir lstats the directories below the levels Open checked: a link
// anywhere on the way is refused, a missing one is fine.
func TestCheckDir(t *testing.T) {
	b := testBoard(t)
	outside := t.TempDir()
	for _, link := range []string{"doing/mallory", ".pickup/reaped/mallory"} {
		p := filepath.Join(b.Dir, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, p); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		rel  string
		want string // the link refused, relative; "" for none
	}{
		{rel: "doing/alice"},
		{rel: "doing/mallory", want: "doing/mallory"},
		{rel: ".pickup/ids/2026-11-22_09"},
		{rel: ".pickup/reaped/alice"},
		{rel: ".pickup/reaped/mallory", want: ".pickup/reaped/mallory"},
		{rel: ".pickup/reaped/mallory/x", want: ".pickup/reaped/mallory"},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			err := b.CheckDir(tt.rel)
			var ue *sessions.UnsafePathError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckDir = %v, want nil", err)
			case tt.want != "" && (!errors.As(err, &ue) || ue.Path != filepath.Join(b.Dir, filepath.FromSlash(tt.want))):
				t.Fatalf("CheckDir = %v, want the link %s refused", err, tt.want)
			}
		})
	}
}

// A board not made by Open (a literal) has had nothing checked: CheckDir
// checks every level.
func TestCheckDirUnsurveyed(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "doing")); err != nil {
		t.Fatal(err)
	}
	err := (&sessions.Board{Dir: dir}).CheckDir("doing/alice")
	var ue *sessions.UnsafePathError
	if !errors.As(err, &ue) || ue.Path != filepath.Join(dir, "doing") {
		t.Fatalf("CheckDir(doing/alice) with doing/ a link = %v, want the link refused", err)
	}
}

// Leases and locks hold process data: owner-only, unless the board's
// .pickup/ is setgid (a group's board), where the group shares them.
func TestPrivatePerm(t *testing.T) {
	for _, tt := range []struct {
		name   string
		setgid bool
		want   fs.FileMode
	}{
		{name: "private", want: 0o600},
		{name: "group board", setgid: true, want: 0o660},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := testBoard(t)
			if tt.setgid {
				if err := os.Chmod(b.RuntimeDir(), 0o775|fs.ModeSetgid); err != nil {
					t.Fatal(err)
				}
			}
			b2, err := sessions.Open(b.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := b2.PrivatePerm(); got != tt.want {
				t.Errorf("PrivatePerm = %v, want %v", got, tt.want)
			}
		})
	}
}

// Reading a board through a link on the way to it (a --dir of the user's
// choosing) is fine: only links inside it are refused.
func TestOpenThroughALinkToTheBoard(t *testing.T) {
	b := testBoard(t)
	put(t, b, "todo/a.md", "---\ntitle: a\n---\n")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(b.Dir, link); err != nil {
		t.Fatal(err)
	}
	lb, err := sessions.Open(link)
	if err != nil {
		t.Fatal(err)
	}
	list, err := lb.List()
	if err != nil || !slices.Equal(ids(list), []string{"a"}) {
		t.Errorf("List through a link to the board = %v, %v", ids(list), err)
	}
}
