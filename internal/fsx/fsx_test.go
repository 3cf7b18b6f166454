package fsx_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// tempLeftovers returns the entries of dir other than want.
func tempLeftovers(t *testing.T, dir string, want ...string) []string {
	t.Helper()
	var extra []string
	for _, n := range names(t, dir) {
		if !slices.Contains(want, n) {
			extra = append(extra, n)
		}
	}
	return extra
}

func TestWriteNew(t *testing.T) {
	tests := []struct {
		name     string
		existing string // content already at the path; "" for none
		data     string
		wantErr  error
		want     string
	}{
		{name: "creates", data: "hello\n", want: "hello\n"},
		{name: "creates empty", data: "", want: ""},
		{name: "refuses to overwrite", existing: "old\n", data: "new\n", wantErr: fs.ErrExist, want: "old\n"},
	}
	for _, sync := range []bool{true, false} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/sync=%v", tt.name, sync), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "x.md")
				if tt.existing != "" {
					writeFile(t, path, tt.existing)
				}
				err := fsx.WriteNew(path, []byte(tt.data), 0o600, sync)
				if tt.wantErr == nil && err != nil {
					t.Fatalf("WriteNew: %v", err)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("WriteNew = %v, want an error matching %v", err, tt.wantErr)
				}
				if got := readFile(t, path); got != tt.want {
					t.Errorf("content = %q, want %q", got, tt.want)
				}
				if extra := tempLeftovers(t, dir, "x.md"); len(extra) > 0 {
					t.Errorf("WriteNew left %q behind", extra)
				}
				if tt.wantErr == nil {
					info, err := os.Stat(path)
					if err != nil {
						t.Fatal(err)
					}
					if perm := info.Mode().Perm(); perm != 0o600 {
						t.Errorf("mode = %v, want 0600", perm)
					}
				}
			})
		}
	}
}

func TestWriteNewMissingDir(t *testing.T) {
	dir := t.TempDir()
	err := fsx.WriteNew(filepath.Join(dir, "no", "x.md"), []byte("x"), 0o644, false)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("WriteNew in a missing directory = %v, want fs.ErrNotExist", err)
	}
	if extra := tempLeftovers(t, dir); len(extra) > 0 {
		t.Errorf("WriteNew left %q behind", extra)
	}
}

// TestWriteNewRace has many goroutines publish different data at one path:
// exactly one wins and its data is there whole.
func TestWriteNewRace(t *testing.T) {
	const racers = 32
	dir := t.TempDir()
	path := filepath.Join(dir, "x.md")
	var g errgroup.Group
	won := make([]bool, racers)
	for i := range racers {
		g.Go(func() error {
			err := fsx.WriteNew(path, bytes.Repeat([]byte{byte('a' + i%26)}, 4096), 0o644, false)
			switch {
			case err == nil:
				won[i] = true
			case errors.Is(err, fs.ErrExist):
			default:
				return fmt.Errorf("writer %d: %w", i, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	winner := slices.Index(won, true)
	if n := len(slices.DeleteFunc(slices.Clone(won), func(w bool) bool { return !w })); n != 1 {
		t.Fatalf("%d writers succeeded, want 1", n)
	}
	if got, want := readFile(t, path), strings.Repeat(string(rune('a'+winner%26)), 4096); got != want {
		t.Errorf("content is not the winner's data whole (%d bytes)", len(got))
	}
	if extra := tempLeftovers(t, dir, "x.md"); len(extra) > 0 {
		t.Errorf("WriteNew left %q behind", extra)
	}
}

func TestWriteReplace(t *testing.T) {
	tests := []struct {
		name     string
		existing string
		data     string
	}{
		{name: "creates", data: "new\n"},
		{name: "replaces", existing: "old content, longer than the new\n", data: "new\n"},
		{name: "replaces with empty", existing: "old\n", data: ""},
	}
	for _, sync := range []bool{true, false} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/sync=%v", tt.name, sync), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "cache")
				if tt.existing != "" {
					writeFile(t, path, tt.existing)
				}
				if err := fsx.WriteReplace(path, []byte(tt.data), 0o644, sync); err != nil {
					t.Fatalf("WriteReplace: %v", err)
				}
				if got := readFile(t, path); got != tt.data {
					t.Errorf("content = %q, want %q", got, tt.data)
				}
				if extra := tempLeftovers(t, dir, "cache"); len(extra) > 0 {
					t.Errorf("WriteReplace left %q behind", extra)
				}
			})
		}
	}
}

// TestWriteReplaceNewInode checks that a replacement is a new file, not an
// in-place rewrite (readers holding the old file keep seeing it whole, and
// the listing cache notices the new inode).
func TestWriteReplaceNewInode(t *testing.T) {
	for _, sync := range []bool{true, false} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cache")
			writeFile(t, path, "old")
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			before := inode(t, path)
			if err := fsx.WriteReplace(path, []byte("new"), 0o644, sync); err != nil {
				t.Fatal(err)
			}
			if inode(t, path) == before {
				t.Errorf("WriteReplace kept inode %d: it rewrote the file in place", before)
			}
			old := make([]byte, 10)
			n, _ := f.Read(old)
			if string(old[:n]) != "old" {
				t.Errorf("an open reader sees %q, want the old content", old[:n])
			}
		})
	}
}

func TestReadDirIno(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "file.md"), "x")
	writeFile(t, filepath.Join(dir, ".hidden"), "x")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("file.md", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}

	got, err := fsx.ReadDirIno(dir)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]fsx.DirEntry{}
	for _, e := range got {
		if _, dup := byName[e.Name]; dup {
			t.Errorf("%q listed twice", e.Name)
		}
		byName[e.Name] = e
	}
	tests := []struct {
		name string
		want fs.FileMode
	}{
		{name: "file.md", want: 0},
		{name: ".hidden", want: 0},
		{name: "sub", want: fs.ModeDir},
		{name: "link.md", want: fs.ModeSymlink},
		{name: "dangling", want: fs.ModeSymlink},
		{name: "fifo.md", want: fs.ModeIrregular | fs.ModeDevice},
	}
	if len(got) != len(tests) {
		t.Errorf("ReadDirIno returned %d entries, want %d (no . or ..): %v", len(got), len(tests), got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := byName[tt.name]
			if !ok {
				t.Fatalf("%q not listed", tt.name)
			}
			if e.Type != tt.want {
				t.Errorf("Type = %v, want %v", e.Type, tt.want)
			}
			if want := inode(t, filepath.Join(dir, tt.name)); e.Ino != want {
				t.Errorf("Ino = %d, want %d (from lstat)", e.Ino, want)
			}
		})
	}
}

func TestReadDirInoErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, file, "x")
	tests := []struct {
		name string
		dir  string
		want error
	}{
		{name: "missing", dir: filepath.Join(dir, "missing"), want: fs.ErrNotExist},
		{name: "not a directory", dir: file, want: syscall.ENOTDIR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fsx.ReadDirIno(tt.dir)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ReadDirIno = %v, %v; want an error matching %v", got, err, tt.want)
			}
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Path != tt.dir {
				t.Errorf("error %v does not name %s", err, tt.dir)
			}
		})
	}
}

func TestReadDirInoEmpty(t *testing.T) {
	got, err := fsx.ReadDirIno(t.TempDir())
	if err != nil || len(got) != 0 {
		t.Fatalf("ReadDirIno(empty dir) = %v, %v; want no entries", got, err)
	}
}

// TestReadDirInoLarge lists a directory that takes several getdents calls,
// with names of many lengths so that records straddle buffer boundaries.
func TestReadDirInoLarge(t *testing.T) {
	const n = 5000
	dir := t.TempDir()
	for i := range n {
		name := fmt.Sprintf("%05d-%s.md", i, strings.Repeat("x", i%200))
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	got, err := fsx.ReadDirIno(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n {
		t.Fatalf("os.ReadDir found %d entries, want %d", len(entries), n)
	}
	gotNames := make([]string, len(got))
	for i, e := range got {
		gotNames[i] = e.Name
	}
	slices.Sort(gotNames)
	wantNames := make([]string, len(entries))
	for i, e := range entries {
		wantNames[i] = e.Name()
	}
	if !slices.Equal(gotNames, wantNames) {
		t.Fatalf("ReadDirIno names differ from os.ReadDir: got %d names, want %d", len(gotNames), len(wantNames))
	}
	for _, e := range got {
		if e.Type != 0 {
			t.Errorf("%s: Type = %v, want regular", e.Name, e.Type)
		}
		if want := inode(t, filepath.Join(dir, e.Name)); e.Ino != want {
			t.Errorf("%s: Ino = %d, want %d", e.Name, e.Ino, want)
		}
	}
}
