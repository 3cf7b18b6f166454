package sessions

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"
)

func TestCacheCorrupt(t *testing.T) {
	// header and line are a valid cache for todo/a.md as the board below
	// lists it, but with another title and priority: a test that gets
	// "from the cache" back knows the corrupt file was read.
	tests := []struct {
		name    string
		corrupt func(valid []byte) []byte
		perm    bool // keep the valid cache's entry usable
	}{
		{name: "empty", corrupt: func([]byte) []byte { return nil }},
		{name: "garbage", corrupt: func([]byte) []byte { return []byte("\x00\xff garbage\n\t\t\t\n\\\\\\") }},
		{name: "only a header", corrupt: func([]byte) []byte { return appendCacheHeader(nil) }},
		{name: "header without newline", corrupt: func([]byte) []byte { return []byte(cacheHeader) }},
		{name: "wrong header", corrupt: func(v []byte) []byte { return bytes.Replace(v, []byte(cacheHeader), []byte("pickup-cache 0"), 1) }},
		{name: "no header", corrupt: func(v []byte) []byte { _, rest, _ := bytes.Cut(v, []byte("\n")); return rest }},
		{name: "truncated line", corrupt: func(v []byte) []byte { return v[:len(v)-len("\tfrom the cache\t\t\t\n")-2] }},
		{name: "truncated in the last field", corrupt: func(v []byte) []byte { return v[:len(v)-1] }, perm: true},
		{name: "three fields", corrupt: func([]byte) []byte { return []byte(string(appendCacheHeader(nil)) + "a.md\t1\t2\n") }},
		{name: "twelve fields", corrupt: func(v []byte) []byte { return append(bytes.TrimSuffix(v, []byte("\n")), "\textra\n"...) }},
		{name: "eleven empty fields", corrupt: func([]byte) []byte { return []byte(string(appendCacheHeader(nil)) + strings.Repeat("\t", 10) + "\n") }},
		{name: "bad numbers", corrupt: func(v []byte) []byte {
			return []byte(string(appendCacheHeader(nil)) + "a.md\tx\ty\tz\t1\t0\t0\tfrom the cache\t\t\t\n")
		}},
		{name: "priority out of range", corrupt: func(v []byte) []byte { return replaceField(v, 4, "9") }},
		{name: "priority below range", corrupt: func(v []byte) []byte { return replaceField(v, 4, "-5") }},
		{name: "huge numbers", corrupt: func(v []byte) []byte { return replaceField(v, 5, "99999999999999999999999") }},
		{name: "wrong inode", corrupt: func(v []byte) []byte { return replaceField(v, 1, "1") }},
		{name: "wrong size", corrupt: func(v []byte) []byte { return replaceField(v, 3, "1") }},
		{name: "CRLF", corrupt: func(v []byte) []byte { return bytes.ReplaceAll(v, []byte("\n"), []byte("\r\n")) }},
		{name: "duplicate lines", corrupt: func(v []byte) []byte {
			_, rest, _ := bytes.Cut(v, []byte("\n"))
			return append(append([]byte(nil), v...), rest...)
		}, perm: true},
		{name: "lone backslashes", corrupt: func(v []byte) []byte { return bytes.Replace(v, []byte("from the cache"), []byte(`\\\q\`), 1) }, perm: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := cacheTestBoard(t)
			cachePut(t, b, "todo/a.md", cacheSession("high", "from the file"))
			cachePut(t, b, "todo/b.md", cacheSession("low", "other"))
			want := cacheMustList(t, b, Todo)
			// Make the valid cache say something else about a.md, so
			// that whether the corrupt file was trusted shows.
			valid, err := os.ReadFile(b.cachePath("todo"))
			if err != nil {
				t.Fatal(err)
			}
			valid = cacheOnly(t, valid, "a.md")
			valid = bytes.Replace(valid, []byte("from the file"), []byte("from the cache"), 1)
			if err := os.WriteFile(b.cachePath("todo"), tt.corrupt(valid), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, validate := range []bool{true, false} {
				got, err := b.ListState(Todo, validate)
				if err != nil {
					t.Fatalf("ListState(todo, %v): %v", validate, err)
				}
				if tt.perm {
					// The entry is still well formed: it may be used.
					if len(got) == 2 {
						got[0].Title = "from the file"
					}
				}
				if d := cacheDiff(got, want); d != "" {
					t.Errorf("ListState(todo, %v) with a corrupt cache:\n%s", validate, d)
				}
			}
		})
	}
}

// cacheOnly keeps the header and the line for name.
func cacheOnly(t *testing.T, cache []byte, name string) []byte {
	t.Helper()
	lines := bytes.SplitAfter(cache, []byte("\n"))
	out := append([]byte(nil), lines[0]...)
	for _, l := range lines[1:] {
		if bytes.HasPrefix(l, []byte(name+"\t")) {
			return append(out, l...)
		}
	}
	t.Fatalf("no line for %s in the cache %q", name, cache)
	return nil
}

// replaceField replaces field i of the first entry line.
func replaceField(cache []byte, i int, value string) []byte {
	header, rest, _ := bytes.Cut(cache, []byte("\n"))
	line, rest, _ := bytes.Cut(rest, []byte("\n"))
	fields := strings.Split(string(line), "\t")
	fields[i] = value
	return []byte(string(header) + "\n" + strings.Join(fields, "\t") + "\n" + string(rest))
}

func TestCacheUnusable(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, b *Board)
	}{
		{name: "cache directory removed", damage: func(t *testing.T, b *Board) {
			if err := os.RemoveAll(filepath.Join(b.RuntimeDir(), "cache")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "runtime directory removed", damage: func(t *testing.T, b *Board) {
			if err := os.RemoveAll(b.RuntimeDir()); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "cache file is a directory", damage: func(t *testing.T, b *Board) {
			if err := os.Remove(b.cachePath("todo")); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(b.cachePath("todo"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "cache directory is a file", damage: func(t *testing.T, b *Board) {
			dir := filepath.Join(b.RuntimeDir(), "cache")
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir, []byte("not a directory"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := cacheTestBoard(t)
			cacheBoardWithEverything(t, b)
			want := cacheMustList(t, b)
			tt.damage(t, b)
			for round := range 2 {
				got := cacheMustList(t, b)
				if d := cacheDiff(got, want); d != "" {
					t.Errorf("round %d: %s", round, d)
				}
			}
		})
	}
}

func TestCacheRecreated(t *testing.T) {
	b := cacheTestBoard(t)
	cachePut(t, b, "todo/a.md", cacheSession("high", "a"))
	cacheMustList(t, b)
	if err := os.RemoveAll(filepath.Join(b.RuntimeDir(), "cache")); err != nil {
		t.Fatal(err)
	}
	cacheMustList(t, b)
	if c := b.loadCache("todo"); c.len() != 1 {
		t.Errorf("after removing the cache directory, List left a cache of %d entries, want 1", c.len())
	}
}

func TestCacheForgetsRemovedFiles(t *testing.T) {
	b := cacheTestBoard(t)
	for i := range 40 {
		cachePut(t, b, fmt.Sprintf("todo/s%02d.md", i), cacheSession("medium", "s"))
	}
	cacheMustList(t, b)
	for i := range 39 {
		if err := os.Remove(b.Path(Todo, "", fmt.Sprintf("s%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, validate := range []bool{false, true} {
		list, err := b.ListState(Todo, validate)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].ID != "s39" {
			t.Errorf("ListState(todo, %v) = %d sessions, want only s39", validate, len(list))
		}
	}
	if c := b.loadCache("todo"); c.len() != 1 {
		t.Errorf("the cache still holds %d entries for 1 file", c.len())
	}
}

// TestCacheConcurrentLists lists one board from many goroutines while a
// file changes: every listing is complete and no cache write breaks another.
func TestCacheConcurrentLists(t *testing.T) {
	b := cacheTestBoard(t)
	for i := range 20 {
		cachePut(t, b, fmt.Sprintf("todo/s%02d.md", i), cacheSession("medium", fmt.Sprintf("s%02d", i)))
	}
	var g errgroup.Group
	for i := range 8 {
		g.Go(func() error {
			for round := range 20 {
				if i == 0 {
					// Rewrite one session by rename, as an editor would.
					tmp := filepath.Join(b.Dir, "todo", ".s00.md.tmp")
					// Each version has another size, so that a validated
					// listing tells them apart even if the file system
					// reuses an inode within one timestamp tick.
					if err := os.WriteFile(tmp, []byte(cacheSession("medium", "s00 "+strings.Repeat("v", round+1))), 0o644); err != nil {
						return err
					}
					if err := os.Rename(tmp, b.Path(Todo, "", "s00")); err != nil {
						return err
					}
				}
				list, err := b.ListState(Todo, round%2 == 0)
				if err != nil {
					return err
				}
				if len(list) != 20 {
					return fmt.Errorf("goroutine %d round %d: %d sessions, want 20", i, round, len(list))
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	list := cacheMustList(t, b, Todo)
	if want := "s00 " + strings.Repeat("v", 20); list[0].ID != "s00" || list[0].Title != want {
		t.Errorf("after the race, s00 is %+v, want title %q", list[0], want)
	}
}
