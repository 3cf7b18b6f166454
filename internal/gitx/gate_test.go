package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func gateDir(t *testing.T) (top string, g *Gate) {
	t.Helper()
	top = t.TempDir()
	if err := os.Mkdir(filepath.Join(top, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	board := filepath.Join(top, ".spx", "sessions")
	if err := os.MkdirAll(board, 0o755); err != nil {
		t.Fatal(err)
	}
	g = FindGate(board)
	if g == nil || g.GitDir != filepath.Join(top, ".git") {
		t.Fatalf("FindGate(%s) = %+v", board, g)
	}
	return top, g
}

func TestFindGate(t *testing.T) {
	if g := FindGate(t.TempDir()); g != nil {
		t.Errorf("a directory outside any work tree has a gate: %+v", g)
	}
	// A linked worktree: .git is a file naming its git directory.
	wt := t.TempDir()
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: ../main/.git/worktrees/wt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := FindGate(filepath.Join(wt, "sub"))
	if g == nil || g.GitDir != filepath.Join(filepath.Dir(wt), "main/.git/worktrees/wt") || g.Top != wt {
		t.Errorf("linked worktree: %+v", g)
	}
}

func TestGateStopped(t *testing.T) {
	for _, tc := range []struct{ marker, op string }{
		{"rebase-merge", "rebase"}, {"rebase-apply", "rebase"}, {"MERGE_HEAD", "merge"},
		{"CHERRY_PICK_HEAD", "cherry-pick"}, {"REVERT_HEAD", "revert"},
	} {
		t.Run(tc.marker, func(t *testing.T) {
			top, g := gateDir(t)
			leave, err := g.Enter() // creates the gate file
			if err != nil {
				t.Fatalf("clean work tree: %v", err)
			}
			leave()
			// An old git directory: the clean check is remembered, and
			// must be forgotten when a marker appears.
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(filepath.Join(top, ".git"), old, old); err != nil {
				t.Fatal(err)
			}
			leave, err = g.Enter()
			if err != nil {
				t.Fatalf("clean work tree: %v", err)
			}
			leave()
			if g.clean.Load() == 0 {
				t.Fatal("the clean check of an old git directory was not remembered")
			}
			if err := os.Mkdir(filepath.Join(top, ".git", tc.marker), 0o755); err != nil {
				t.Fatal(err)
			}
			_, err = g.Enter()
			var se *StoppedError
			if !errors.Is(err, ErrStopped) || !errors.As(err, &se) || se.Op != tc.op {
				t.Fatalf("Enter with %s: %v", tc.marker, err)
			}
		})
	}
}

// A move waits while a sync holds the gate, and gets it once the sync
// lets go; moves share it; a sync waits for a move in flight.
func TestGateExcludesSync(t *testing.T) {
	_, g := gateDir(t)
	g.Wait = 50 * time.Millisecond
	open, err := g.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Enter()
	var be *GateBusyError
	if !errors.Is(err, ErrSyncRunning) || !errors.As(err, &be) {
		t.Fatalf("Enter while a sync holds the gate: %v", err)
	}
	open()
	leave1, err := g.Enter()
	if err != nil {
		t.Fatal(err)
	}
	leave2, err := g.Enter()
	if err != nil {
		t.Fatalf("a second move waits for the first: %v", err)
	}
	if _, err := g.Close(context.Background()); err == nil {
		t.Fatal("a sync took the gate while moves held it")
	}
	leave1()
	leave2()
	open, err = g.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	open()
}

// A sync that ends (killed) releases the gate with its descriptor.
func TestGateReleasedOnClose(t *testing.T) {
	_, g := gateDir(t)
	g.Wait = 5 * time.Second
	open, err := g.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		leave, err := g.Enter()
		if err == nil {
			leave()
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Enter returned while a sync held the gate: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	open()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
