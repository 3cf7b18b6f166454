//go:build unix

package claim_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// An owner's directory that is a link (a repository can commit
// doing/alice -> /elsewhere) is refused when the owner's client is made:
// no claim ever lands in the link's target, and nothing moves.
func TestClientRefusesLinkedOwnerDir(t *testing.T) {
	b := pkBoard(t)
	pkPut(t, b, sessions.Todo, "", "x", sessions.Meta{})
	outside := t.TempDir()
	link := b.StateDir(sessions.Doing, "alice")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	opened, err := sessions.Open(b.Dir) // other owners' links do not stop the board
	if err != nil {
		t.Fatal(err)
	}
	_, err = claim.New(opened, "alice")
	var ue *sessions.UnsafePathError
	if !errors.As(err, &ue) || ue.Path != link {
		t.Fatalf("New(alice) with doing/alice a link = %v, want the link refused", err)
	}
	// Another owner is not stopped, and never sees alice's link.
	bob := pkClient(t, opened, "bob")
	if _, err := bob.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := pkWhere(t, b, "x"); got != "doing/bob" {
		t.Errorf("x is in %s, want doing/bob", got)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the link's target got %d entries", len(entries))
	}
}

// Leases and lock files hold process data: created owner-only.
func TestLeaseAndLockFilesArePrivate(t *testing.T) {
	b := pkBoard(t)
	leases := &claim.Leases{Board: b}
	if _, err := leases.Heartbeat("alice", claim.Holder(proc.Env{}.Self())); err != nil {
		t.Fatal(err)
	}
	unlock, err := claim.BoardLocks(b).Acquire(context.Background(), "deploy")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	var checked int
	for _, dir := range []string{"leases", claim.LocksDirName} {
		err := filepath.WalkDir(filepath.Join(b.RuntimeDir(), dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			checked++
			if perm := info.Mode().Perm(); perm&0o077 != 0 {
				t.Errorf("%s has mode %v, want owner-only", p, perm)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 3 {
		t.Errorf("only %d lease and lock files to check", checked)
	}
}

// A clone lacks empty state directories. Watch does not make them (it is
// read-only): it watches for them to appear, and reports what moves into
// them from then on; a claimer makes what it needs.
func TestWatchMissingStateDirs(t *testing.T) {
	b := pkBoard(t)
	b.NoSync = true
	for _, d := range []sessions.State{sessions.Doing, sessions.Done, sessions.Failed} {
		if err := os.RemoveAll(b.StateDir(d, "")); err != nil {
			t.Fatal(err)
		}
	}
	pkPut(t, b, sessions.Todo, "", "x", sessions.Meta{})
	changes := wsWatch(t, b)
	wsReady(t, b, changes)
	for _, d := range []sessions.State{sessions.Doing, sessions.Done} {
		if _, err := os.Lstat(b.StateDir(d, "")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Watch made %s/: %v", d, err)
		}
	}
	c := pkClient(t, b, "alice")
	for _, step := range []struct {
		do   func(context.Context, string) (sessions.Session, error)
		want claim.Change
	}{
		{c.Claim, claim.Change{Event: "claimed", ID: "x", State: sessions.Doing, Owner: "alice"}},
		{c.Done, claim.Change{Event: "done", ID: "x", State: sessions.Done}},
	} {
		if _, err := step.do(context.Background(), "x"); err != nil {
			t.Fatal(err)
		}
		if got := wsUntilSentinel(t, b, changes); !slices.Equal(got, []claim.Change{step.want}) {
			t.Errorf("changes = %+v, want %+v", got, step.want)
		}
	}
}
