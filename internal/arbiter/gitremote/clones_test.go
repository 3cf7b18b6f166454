package gitremote

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// TestHeardHolders: a clone hears an owner's lease processes from the
// other registered clones of the same remote and branch whose lease is
// recent; not from another remote's or branch's clones, not from a lease
// older than the stale period, and it forgets a clone that was deleted.
func TestHeardHolders(t *testing.T) {
	reg := t.TempDir()
	root := t.TempDir()
	now := time.Now()
	clone := func(name, url, branch string, leaseAge time.Duration, pid int) *Board {
		dir := filepath.Join(root, name, ".spx", "sessions")
		if err := os.MkdirAll(filepath.Join(dir, sessions.RuntimeDirName, "leases"), 0o755); err != nil {
			t.Fatal(err)
		}
		if pid != 0 {
			data, _ := json.Marshal(map[string]any{"owner": "victim", "holders": []proc.Process{{PID: pid, Host: "vm"}}, "heartbeat_at": now.Add(-leaseAge)})
			if err := os.WriteFile(filepath.Join(dir, sessions.RuntimeDirName, "leases", "victim.json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s := &Board{B: &sessions.Board{Dir: dir}, ClonesDir: reg, Remote: "origin", Branch: branch}
		if err := s.writeEntry(url); err != nil {
			t.Fatal(err)
		}
		s.register(t.Context()) // reads the entry: no git
		if s.remoteURL != url {
			t.Fatalf("register read %q, want %q", s.remoteURL, url)
		}
		return s
	}
	here := clone("here", "git://h/r", "pickup", 0, 0)
	clone("fresh", "git://h/r", "pickup", time.Minute, 101)
	clone("old", "git://h/r", "pickup", time.Hour, 102) // older than the 30 min stale period
	clone("other-remote", "git://h/other", "pickup", 0, 103)
	clone("other-branch", "git://h/r", "board2", 0, 104)
	gone := clone("gone", "git://h/r", "pickup", 0, 105)
	if err := os.RemoveAll(filepath.Dir(filepath.Dir(gone.B.Dir))); err != nil {
		t.Fatal(err)
	}

	var pids []int
	for _, p := range here.HeardHolders("victim") {
		pids = append(pids, p.PID)
	}
	if !slices.Equal(pids, []int{101}) {
		t.Errorf("heard pids %v, want [101] (the fresh lease of the same remote and branch only)", pids)
	}
	if _, err := os.Stat(filepath.Join(peersDir(reg, "git://h/r", "pickup"), digest(gone.B.Dir)+".json")); !os.IsNotExist(err) {
		t.Errorf("the deleted clone's registration is still there (%v)", err)
	}
	if got := here.HeardHolders("nobody"); len(got) != 0 {
		t.Errorf("an owner with no lease anywhere: heard %v", got)
	}
	view := ViewHolders(here.B, reg)
	if view == nil || len(view("victim")) != 1 {
		t.Errorf("ViewHolders: want the same one holder")
	}
}
