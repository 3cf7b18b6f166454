package fsx_test

// ReadDirIno: directory listings with inode numbers.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/pickup-dev/pickup/internal/fsx"
)

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
