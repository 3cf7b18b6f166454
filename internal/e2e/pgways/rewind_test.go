package pgways

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbin"
)

// TestHistoryRewound: a person rewinds the board branch on the git remote
// — force-pushes it back to the commit of the first batch, or deletes it —
// after three batches were pushed and marked. The next pusher sees that
// the branch no longer has its last push, says so (sync's line, the
// pusher's log that status shows) with how many transitions it pushes
// again, and puts them on the branch again with the new ones: the branch
// then lists every transition of the database exactly once, and its tree
// is the board. Before the rewind, no push says the branch was rewound.
// A pusher killed after it found the rewind, while its push waits at the
// remote (which then refuses it), has said so already, and the next one
// pushes the transitions again: nothing is lost.
func TestHistoryRewound(t *testing.T) {
	for _, tc := range []struct {
		name    string
		deleted bool
		kill    bool
	}{
		{"force-pushed back", false, false},
		{"deleted", true, false},
		{"force-pushed back, pusher killed", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, url := newDatabase(t)
			r := newGitRemote(t)
			cs := r.clones(url, 2, "1h") // pushes only when the test says
			ids := createFromAll(t, cs, 8)
			testbin.WaitDetached(r.root)
			syncNoRewind(t, cs[0])
			first := strings.TrimSpace(r.git(r.bare, "rev-parse", "pickup"))
			onFirst := transitionLines(r.git(r.bare, "log", "--format=%B", first))
			finishSome(t, cs[1], "w1", 2)
			syncNoRewind(t, cs[1])
			finishSome(t, cs[0], "w0", 2)
			syncNoRewind(t, cs[0])
			r.checkBranchMatchesDB(db)
			total, _ := strconv.Atoi(server.psql(t, db, "SELECT count(*) FROM pickup_events"))

			// A person, in a clone of their own.
			top := filepath.Dir(cs[1].dir)
			r.git(top, "fetch", "-q", "origin", "pickup")
			lost := total - onFirst
			if tc.deleted {
				r.git(top, "push", "-q", "origin", ":refs/heads/pickup")
				lost = total
			} else {
				r.git(top, "push", "-q", "--force", "origin", first+":refs/heads/pickup")
			}
			if lost <= 0 || pending(t, db) != 0 {
				t.Fatalf("the rewind dropped %d transitions (%d waiting): the test lost nothing", lost, pending(t, db))
			}
			finishSome(t, cs[1], "w1", 2)
			fresh := pending(t, db)

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			said := "the board branch origin pickup was rewound (force-pushed back or deleted: it no longer has "
			again := fmt.Sprintf("%d transitions no longer on it are pushed again", lost)
			switch {
			case tc.kill:
				killedPush(t, r, cs[0])
				if out := cs[0].must("", "status"); !strings.Contains(out, said) || !strings.Contains(out, again) {
					t.Errorf("status after the pusher that found the rewind was killed does not say so (want %q):\n%s", again, out)
				}
				if n := pending(t, db); n != lost+fresh {
					t.Errorf("%d transitions wait after the killed push, want %d (%d lost, %d new)", n, lost+fresh, lost, fresh)
				}
				res := cs[1].pickup(ctx, "", "sync")
				want := fmt.Sprintf("history: pushed %d transitions to origin pickup", lost+fresh)
				if res.code != 0 || !strings.Contains(res.stdout, want) || strings.Contains(res.stdout, "rewound") {
					// (The killed pusher recorded the branch's tip
					// with its repair: the rewind is not found twice.)
					t.Errorf("sync after the killed pusher (want %q, and no second rewind): exit %d\n%s%s", want, res.code, res.stdout, res.stderr)
				}
			case tc.deleted:
				// The pusher that a command starts when a push is due.
				cmd := exec.CommandContext(ctx, filepath.Join(bin, "pickup"), "--dir", cs[0].dir, "pg-history")
				cmd.Env = env(cs[0].home)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("pg-history after the branch was deleted: %v\n%s", err, out)
				}
			default:
				res := cs[0].pickup(ctx, "", "sync")
				want := fmt.Sprintf("history: pushed %d transitions to origin pickup", lost+fresh)
				if res.code != 0 || !strings.Contains(res.stdout, "history: "+said) || !strings.Contains(res.stdout, again) || !strings.Contains(res.stdout, want) {
					t.Errorf("sync after the branch was force-pushed back (%d transitions lost, %d new; want %q and %q): exit %d\n%s%s", lost, fresh, again, want, res.code, res.stdout, res.stderr)
				}
			}
			r.checkBranchMatchesDB(db)
			out := cs[0].must("", "status")
			if !strings.Contains(out, said) || !strings.Contains(out, again) {
				t.Errorf("status does not say that the branch was rewound (want %q):\n%s", again, out)
			}
			t.Logf("%d transitions lost by the rewind, %d new; status says:\n%s", lost, fresh, out)

			// The board goes on, and so does its history.
			finishSome(t, cs[0], "w0", len(ids)-6)
			syncNoRewind(t, cs[1])
			r.checkBranchHistory(ids)
			r.checkBranchMatchesDB(db)
		})
	}
}

// killedPush starts sync on c while the remote holds pushes, kills it once
// its push is at the remote, and has the remote refuse that push.
func killedPush(t *testing.T, r *gitRemote, c *clone) {
	t.Helper()
	starts := r.count("start")
	refused := r.count("end-refused")
	touch(t, filepath.Join(r.bare, "hold"))
	cmd := exec.Command(filepath.Join(bin, "pickup"), "--dir", c.dir, "sync")
	cmd.Env = env(c.home)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.waitLog("start", starts+1)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	touch(t, filepath.Join(r.bare, "refuse"))
	os.Remove(filepath.Join(r.bare, "hold"))
	r.waitLog("end-refused", refused+1)
	os.Remove(filepath.Join(r.bare, "refuse"))
}

// syncNoRewind runs sync on c, which must push without finding the
// branch rewound.
func syncNoRewind(t *testing.T, c *clone) {
	t.Helper()
	out := c.must("", "sync")
	if strings.Contains(out, "rewound") {
		t.Fatalf("sync found the branch rewound when nobody touched it:\n%s", out)
	}
}

// transitionLines counts the transition lines ("id op src → dst …") of
// commit messages.
func transitionLines(log string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if f := strings.Fields(line); len(f) >= 5 && f[3] == "→" {
			n++
		}
	}
	return n
}
