package fsx_test

// WriteNew and WriteReplace: publishing files whole, never replacing (or
// always replacing) what is there.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/pickup-dev/pickup/internal/fsx"
)

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
