package fsx_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// writeFile creates path with data, failing the test on error.
func writeFile(t *testing.T, path string, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readFile returns the content of path, or "<missing>" if it does not exist.
func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "<missing>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// names lists the entries of dir, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skipf("no inode numbers on %s", path)
	}
	return uint64(st.Ino)
}

var renames = []struct {
	name   string
	rename func(oldpath, newpath string) error
}{
	{"RenameNoReplace", fsx.RenameNoReplace},
	{"LinkUnlink", fsx.LinkUnlink},
}

func TestRename(t *testing.T) {
	tests := []struct {
		name    string
		old     string // content of old; "" means missing
		new     string // content of new; "" means missing
		newDir  bool   // new is a directory
		wantErr error  // nil for success
		wantOld string // content after
		wantNew string
	}{
		{name: "success", old: "old content", wantOld: "<missing>", wantNew: "old content"},
		{name: "target exists", old: "old content", new: "new content", wantErr: fs.ErrExist, wantOld: "old content", wantNew: "new content"},
		{name: "source missing", new: "new content", wantErr: fs.ErrNotExist, wantOld: "<missing>", wantNew: "new content"},
		{name: "source and target missing", wantErr: fs.ErrNotExist, wantOld: "<missing>", wantNew: "<missing>"},
		{name: "target is a directory", old: "old content", newDir: true, wantErr: fs.ErrExist, wantOld: "old content"},
	}
	for _, r := range renames {
		for _, tt := range tests {
			t.Run(r.name+"/"+tt.name, func(t *testing.T) {
				dir := t.TempDir()
				oldpath, newpath := filepath.Join(dir, "old"), filepath.Join(dir, "new")
				if tt.old != "" {
					writeFile(t, oldpath, tt.old)
				}
				if tt.new != "" {
					writeFile(t, newpath, tt.new)
				}
				if tt.newDir {
					if err := os.Mkdir(newpath, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				err := r.rename(oldpath, newpath)
				if tt.wantErr == nil {
					if err != nil {
						t.Fatalf("%s: %v", r.name, err)
					}
				} else {
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("%s = %v, want an error matching %v", r.name, err, tt.wantErr)
					}
					var le *os.LinkError
					if !errors.As(err, &le) {
						t.Fatalf("%s error is %T, want *os.LinkError", r.name, err)
					}
					if le.Op != "rename" || le.Old != oldpath || le.New != newpath {
						t.Errorf("%s error = {Op: %q, Old: %q, New: %q}, want {rename, %q, %q}", r.name, le.Op, le.Old, le.New, oldpath, newpath)
					}
				}
				if got := readFile(t, oldpath); got != tt.wantOld {
					t.Errorf("old = %q, want %q", got, tt.wantOld)
				}
				if tt.newDir {
					if info, err := os.Stat(newpath); err != nil || !info.IsDir() {
						t.Errorf("the target directory was replaced: %v", err)
					}
					return
				}
				if got := readFile(t, newpath); got != tt.wantNew {
					t.Errorf("new = %q, want %q", got, tt.wantNew)
				}
			})
		}
	}
}

// TestRenameKeepsInode checks that a rename moves the file itself (the
// listing cache relies on the inode surviving a transition).
func TestRenameKeepsInode(t *testing.T) {
	for _, r := range renames {
		t.Run(r.name, func(t *testing.T) {
			dir := t.TempDir()
			oldpath, newpath := filepath.Join(dir, "old"), filepath.Join(dir, "sub", "new")
			if err := os.Mkdir(filepath.Dir(newpath), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, oldpath, "x")
			want := inode(t, oldpath)
			if err := r.rename(oldpath, newpath); err != nil {
				t.Fatal(err)
			}
			if got := inode(t, newpath); got != want {
				t.Errorf("inode after %s = %d, want %d", r.name, got, want)
			}
			info, err := os.Stat(newpath)
			if err != nil {
				t.Fatal(err)
			}
			if n := info.Sys().(*syscall.Stat_t).Nlink; n != 1 {
				t.Errorf("link count after %s = %d, want 1", r.name, n)
			}
		})
	}
}

// TestRenameRace has many goroutines move one file to distinct names: exactly
// one of them must win, the others must see fs.ErrNotExist, and the file
// must end up under exactly one name.
func TestRenameRace(t *testing.T) {
	const racers = 32
	for _, r := range renames {
		t.Run(r.name, func(t *testing.T) {
			for round := 0; round < 20; round++ {
				dir := t.TempDir()
				src := filepath.Join(dir, "src")
				writeFile(t, src, "the one file")
				start := make(chan struct{})
				var g errgroup.Group
				won := make([]bool, racers)
				for i := range racers {
					g.Go(func() error {
						<-start
						err := r.rename(src, filepath.Join(dir, fmt.Sprintf("dst%02d", i)))
						switch {
						case err == nil:
							won[i] = true
						case errors.Is(err, fs.ErrNotExist):
						default:
							return fmt.Errorf("racer %d: %w (want nil or fs.ErrNotExist)", i, err)
						}
						return nil
					})
				}
				close(start)
				if err := g.Wait(); err != nil {
					t.Fatal(err)
				}
				var winners []string
				for i, w := range won {
					if w {
						winners = append(winners, fmt.Sprintf("dst%02d", i))
					}
				}
				if len(winners) != 1 {
					t.Fatalf("round %d: winners %v, want exactly one", round, winners)
				}
				if got := names(t, dir); !slices.Equal(got, winners) {
					t.Fatalf("round %d: directory holds %v, want only the winner's %v", round, got, winners)
				}
				if got := readFile(t, filepath.Join(dir, winners[0])); got != "the one file" {
					t.Fatalf("round %d: winner's file = %q", round, got)
				}
			}
		})
	}
}
