//go:build unix

package fsx_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// unsafeFixture makes, in a fresh directory, a regular file, a link to it,
// a dangling link, a named pipe and a directory, and returns the directory.
func unsafeFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "file"), "content\n")
	writeFile(t, filepath.Join(dir, "secret"), "secret\n")
	for name, target := range map[string]string{"link": "secret", "dangling": "nowhere", "dirlink": "dir"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The readers of a board's files read regular files and refuse the rest
// without following or blocking on them; the secret behind a link is never
// returned.
func TestReadRegular(t *testing.T) {
	dir := unsafeFixture(t)
	readers := map[string]func(string) ([]byte, error){
		"ReadRegular": fsx.ReadRegular,
		"MapFile": func(p string) ([]byte, error) {
			data, release, err := fsx.MapFile(p)
			if err != nil {
				return nil, err
			}
			defer release()
			return append([]byte(nil), data...), nil
		},
		"OpenRegular": func(p string) ([]byte, error) {
			f, err := fsx.OpenRegular(p)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return io.ReadAll(f)
		},
	}
	tests := []struct {
		name     string
		want     string
		wantKind string // of the *UnsafePathError; "" for none
		wantErr  error
	}{
		{name: "file", want: "content\n"},
		{name: "link", wantKind: "symlink"},
		{name: "dangling", wantKind: "symlink"},
		{name: "fifo", wantKind: "fifo"},
		{name: "dir", wantKind: "irregular"},
		{name: "missing", wantErr: fs.ErrNotExist},
	}
	for rname, read := range readers {
		for _, tt := range tests {
			t.Run(rname+"/"+tt.name, func(t *testing.T) {
				path := filepath.Join(dir, tt.name)
				done := make(chan struct{})
				var got []byte
				var err error
				go func() { got, err = read(path); close(done) }()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					t.Fatalf("%s(%s) hangs", rname, tt.name)
				}
				var ue *fsx.UnsafePathError
				switch {
				case tt.wantKind != "":
					if !errors.As(err, &ue) || ue.Kind() != tt.wantKind || ue.Path != path || !errors.Is(err, fsx.ErrUnsafe) {
						t.Fatalf("%s = %q, %v; want an *UnsafePathError of kind %s naming %s", rname, got, err, tt.wantKind, path)
					}
				case tt.wantErr != nil:
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("%s = %q, %v; want %v", rname, got, err, tt.wantErr)
					}
				case err != nil || string(got) != tt.want:
					t.Fatalf("%s = %q, %v; want %q", rname, got, err, tt.want)
				}
			})
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nowhere")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a dangling link's target was created")
	}
}

func TestReadRegularSizes(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 4095, 4096, 70000} {
		path := filepath.Join(dir, "f")
		data := make([]byte, n)
		for i := range data {
			data[i] = byte('a' + i%26)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := fsx.ReadRegular(path)
		if err != nil || string(got) != string(data) {
			t.Errorf("ReadRegular of %d bytes = %d bytes, %v", n, len(got), err)
		}
	}
}

// ScanDir lists a directory but not through a link in its own place; a
// link higher up is followed (a board's root may be reached by a link).
func TestScanDirNoFollow(t *testing.T) {
	dir := unsafeFixture(t)
	writeFile(t, filepath.Join(dir, "dir", "inside"), "x")
	_, err := fsx.ReadDirIno(filepath.Join(dir, "dirlink"))
	var ue *fsx.UnsafePathError
	if !errors.As(err, &ue) || ue.Kind() != "symlink" || ue.Target != "dir" {
		t.Fatalf("ReadDirIno(link to a directory) = %v, want an *UnsafePathError for the link", err)
	}
	got, err := fsx.ReadDirIno(filepath.Join(dir, "dirlink") + string(filepath.Separator) + ".")
	if err != nil || len(got) != 1 || got[0].Name != "inside" {
		t.Fatalf("ReadDirIno(link/.) = %v, %v; want the directory's one entry", got, err)
	}
}

func TestCheckDir(t *testing.T) {
	dir := unsafeFixture(t)
	tests := []struct {
		name, wantKind string
	}{
		{name: "dir"},
		{name: "missing"},
		{name: "dirlink", wantKind: "symlink"},
		{name: "fifo", wantKind: "fifo"},
		{name: "file", wantKind: "notdir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fsx.CheckDir(filepath.Join(dir, tt.name))
			var ue *fsx.UnsafePathError
			if tt.wantKind == "" {
				if err != nil {
					t.Fatalf("CheckDir = %v, want nil", err)
				}
				return
			}
			if !errors.As(err, &ue) || ue.Kind() != tt.wantKind {
				t.Fatalf("CheckDir = %v, want an *UnsafePathError of kind %s", err, tt.wantKind)
			}
		})
	}
}
