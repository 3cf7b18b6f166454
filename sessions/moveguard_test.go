package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMoveGuardExcludesMoves checks the guard's one promise: while a repair
// holds it, no move enters (EnterMove waits), and moves never wait for each
// other.
func TestMoveGuardExcludesMoves(t *testing.T) {
	b, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Moves share it.
	leave1, err := b.EnterMove()
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{})
	go func() {
		leave2, err := b.EnterMove()
		if err == nil {
			leave2()
		}
		close(entered)
	}()
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("a move waited for another move")
	}
	leave1()

	// A repair excludes them.
	unrepair, err := b.enterRepair()
	if err != nil {
		t.Fatal(err)
	}
	moved := make(chan error, 1)
	go func() {
		leave, err := b.EnterMove()
		if err == nil {
			leave()
		}
		moved <- err
	}()
	select {
	case err := <-moved:
		t.Fatalf("a move entered while a repair held the guard (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	unrepair()
	select {
	case err := <-moved:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the move did not enter once the repair let go")
	}
}

// TestDuplicateRecheckedUnderGuard: a session the scan saw in two places
// (one file that moved between two directory reads) is neither reported
// nor moved when the second look finds it in one place, and a copy that is
// discarded goes to conflicts/, identical or not: doctor never deletes.
func TestDuplicateRecheckedUnderGuard(t *testing.T) {
	b, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b.NoSync = true
	body := []byte("---\ntitle: x\n---\n")
	todo, doing := b.Path(Todo, "", "s1"), b.Path(Doing, "w3", "s1")
	if err := os.WriteFile(todo, body, 0o644); err != nil {
		t.Fatal(err)
	}
	ino := func(p string) uint64 {
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return info.Sys().(*syscall.Stat_t).Ino
	}
	i := ino(todo)
	// What a scan made during `claim s1` by w3 saw: todo/s1, then
	// doing/w3/s1, the same file; by the second look it is in doing/w3.
	if err := os.MkdirAll(filepath.Dir(doing), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(todo, doing); err != nil {
		t.Fatal(err)
	}
	seen := []copyOf{
		{place: Place{State: Todo, Path: todo}, ino: i, nlink: 1},
		{place: Place{State: Doing, Owner: "w3", Path: doing}, ino: i, nlink: 1},
	}
	none := func() claimHistory { return claimHistory{} }
	if out := b.checkCopies("s1", seen, none, CheckOptions{Repair: true}, true); len(out) != 0 {
		t.Fatalf("findings for a session that only moved: %+v", out)
	}
	if _, err := os.Lstat(doing); err != nil {
		t.Fatalf("the session is gone: %v", err)
	}

	// A real identical copy in todo/: kept doing/w3, the copy moved aside.
	if err := os.WriteFile(todo, body, 0o644); err != nil {
		t.Fatal(err)
	}
	seen[0].ino = ino(todo)
	out := b.checkCopies("s1", seen, none, CheckOptions{Repair: true}, true)
	if len(out) != 1 || !strings.Contains(out[0].Fix, "moved this identical copy to") {
		t.Fatalf("findings %+v, want one fixed by a move to conflicts/", out)
	}
	if _, err := os.Lstat(doing); err != nil {
		t.Fatalf("the kept copy is gone: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(b.Dir, ConflictsDirName, "s1.todo.md")); err != nil || string(data) != string(body) {
		t.Fatalf("conflicts/s1.todo.md: %q, %v", data, err)
	}
}
