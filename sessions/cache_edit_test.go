package sessions

import (
	"os"
	"strings"
	"testing"
	"time"
)

// editInPlace rewrites path through the same inode.
func editInPlace(t *testing.T, path, content string, mtime time.Time) {
	t.Helper()
	before := cacheIno(t, path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if after := cacheIno(t, path); after != before {
		t.Fatalf("the in-place edit changed the inode from %d to %d", before, after)
	}
}

func TestCacheNoticesInPlaceEdit(t *testing.T) {
	orig := cacheSession("high", "title")
	old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		content string
		mtime   time.Time
	}{
		{name: "same size, newer mtime", content: strings.Replace(orig, "high", "low ", 1), mtime: old.Add(time.Second)},
		{name: "same size, mtime one nanosecond newer", content: strings.Replace(orig, "high", "low ", 1), mtime: old.Add(time.Nanosecond)},
		{name: "other size, same mtime", content: strings.Replace(orig, "high", "low", 1), mtime: old},
		{name: "other size, older mtime", content: strings.Replace(orig, "high", "low", 1), mtime: old.Add(-time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.content) == len(orig) && tt.mtime.Equal(old) {
				t.Fatal("bad test: nothing a cache could notice")
			}
			b := cacheTestBoard(t)
			path := cachePut(t, b, "todo/a.md", orig)
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
			list := cacheMustList(t, b, Todo)
			if len(list) != 1 || list[0].Priority != High {
				t.Fatalf("first List = %+v, want one high session", list)
			}
			listed := list[0]
			editInPlace(t, path, tt.content, tt.mtime)

			// Without validation the cache may be trusted, but Refresh
			// must see the edit.
			unvalidated, err := b.ListState(Todo, false)
			if err != nil || len(unvalidated) != 1 {
				t.Fatalf("ListState(todo, false) = %+v, %v", unvalidated, err)
			}
			for _, s := range []Session{listed, unvalidated[0]} {
				fresh, err := b.Refresh(s)
				if err != nil {
					t.Fatal(err)
				}
				if fresh.Priority != Low || fresh.ID != "a" || fresh.State != Todo {
					t.Errorf("Refresh = %+v, want the edited (low) session a in todo", fresh)
				}
			}

			list = cacheMustList(t, b, Todo)
			if len(list) != 1 || list[0].Priority != Low {
				t.Errorf("List after an in-place edit = %+v, want priority low", list)
			}
			// The cache was updated: a later unvalidated listing is right.
			unvalidated, err = b.ListState(Todo, false)
			if err != nil || len(unvalidated) != 1 || unvalidated[0].Priority != Low {
				t.Errorf("ListState(todo, false) after List = %+v, %v; want priority low", unvalidated, err)
			}
		})
	}
}

func TestRefreshUnchanged(t *testing.T) {
	b := cacheTestBoard(t)
	cachePut(t, b, "todo/a.md", cacheSession("high", "title"))
	list := cacheMustList(t, b, Todo)
	got, err := b.Refresh(list[0])
	if err != nil {
		t.Fatal(err)
	}
	if d := cacheDiff([]Session{got}, list); d != "" {
		t.Errorf("Refresh of an unchanged session: %s", d)
	}
}

func TestRefreshGone(t *testing.T) {
	b := cacheTestBoard(t)
	path := cachePut(t, b, "todo/a.md", cacheSession("high", "title"))
	list := cacheMustList(t, b, Todo)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Refresh(list[0]); !os.IsNotExist(err) {
		t.Errorf("Refresh of a removed session = %v, want fs.ErrNotExist", err)
	}
}

// TestCacheNoticesReplacement replaces a file by rename with one of the same
// size and modification time: only the inode tells, and even an unvalidated
// listing must notice.
func TestCacheNoticesReplacement(t *testing.T) {
	b := cacheTestBoard(t)
	orig := cacheSession("high", "title")
	path := cachePut(t, b, "todo/a.md", orig)
	mtime := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	list := cacheMustList(t, b, Todo)
	if len(list) != 1 || list[0].Priority != High {
		t.Fatalf("first List = %+v", list)
	}
	listed := list[0]
	before := cacheIno(t, path)
	tmp := cachePut(t, b, "todo/.a.md.tmp", strings.Replace(orig, "high", "low ", 1))
	if err := os.Chtimes(tmp, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if cacheIno(t, path) == before {
		t.Fatal("the replacement kept the inode")
	}
	for _, validate := range []bool{false, true} {
		list, err := b.ListState(Todo, validate)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].Priority != Low {
			t.Errorf("ListState(todo, %v) after a replacement = %+v, want priority low", validate, list)
		}
	}
	t.Run("Refresh", func(t *testing.T) {
		fresh, err := b.Refresh(listed)
		if err != nil {
			t.Fatal(err)
		}
		if fresh.Priority != Low {
			t.Errorf("Refresh after a replacement by rename (same size and mtime, new inode) = priority %v, want low", fresh.Priority)
		}
	})
}

// TestCacheMove moves a session between states by rename (same inode, as a
// transition does): each state lists it where it is now.
func TestCacheMove(t *testing.T) {
	b := cacheTestBoard(t)
	cachePut(t, b, "todo/a.md", cacheSession("high", "a"))
	cachePut(t, b, "todo/b.md", cacheSession("low", "b"))
	cacheMustList(t, b)
	if err := os.MkdirAll(b.StateDir(Doing, "alice"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(b.Path(Todo, "", "a"), b.Path(Doing, "alice", "a")); err != nil {
		t.Fatal(err)
	}
	for _, validate := range []bool{false, true} {
		todo, err := b.ListState(Todo, validate)
		if err != nil {
			t.Fatal(err)
		}
		doing, err := b.ListState(Doing, validate)
		if err != nil {
			t.Fatal(err)
		}
		if len(todo) != 1 || todo[0].ID != "b" {
			t.Errorf("todo (validate %v) = %+v, want only b", validate, todo)
		}
		if len(doing) != 1 || doing[0].ID != "a" || doing[0].Owner != "alice" || doing[0].Path != b.Path(Doing, "alice", "a") || doing[0].Priority != High {
			t.Errorf("doing (validate %v) = %+v, want a held by alice", validate, doing)
		}
	}
}
