package sharedways

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbound"
)

// The world acting on a shared board while script agents drain it: 3
// clones × 2 agents (subshells of an executable bash script, claiming
// with $(pickup next --json)), 18 sessions. Each scenario waits until a
// third is done, acts as a person would, lets the agents run into it, then
// makes the repair the scenario calls for, and checks with figures that
// every session was claimed exactly once and finished once, and is in
// done/ only on the remote and in every clone.

const (
	worldClones   = 3
	worldAgents   = 2
	worldSessions = 18
)

// worldDrains makes the drains take turns: on two cores, several at once
// only slow each other past their deadlines.
var worldDrains sync.Mutex

// midDrain starts the agents and waits until a fifth of the sessions are
// done on the remote.
func midDrain(t *testing.T) *gitWorld { return drainUntil(t, worldSessions/5, nil) }

// drainUntil starts the agents and waits until done sessions are done
// on the remote. The person's clone is made first.
func drainUntil(t *testing.T, done int, before func(*gitWorld)) *gitWorld {
	worldDrains.Lock()
	t.Cleanup(worldDrains.Unlock)
	w := newGitWorld(t, worldClones, worldSessions)
	if before != nil {
		before(w)
	}
	w.r.person().fetch()
	w.startAgents(worldAgents)
	if !w.watch.Until(func() bool { return w.doneOnRemote() >= done }) {
		t.Fatalf("the drain did not get %d done: %d (%v)\n%s", done, w.doneOnRemote(), w.watch.Err(), w.errLogs())
	}
	t.Logf("%d done after %.1fs", done, time.Since(w.start).Seconds())
	return w
}

// refusedEverywhere waits until every clone's agents met exit 8, for as
// long as another clone keeps being refused (each first refusal is
// progress; testbound.Idle without one ends the wait, and the test goes
// on: its figures tell whether anyone was refused).
func (w *gitWorld) refusedEverywhere() {
	refused := func() int {
		n := 0
		for _, c := range w.cs {
			if ms, _ := filepath.Glob(filepath.Join(w.logs, c.name+"-w*.rc8")); len(ms) > 0 {
				n++
			}
		}
		return n
	}
	bound := testbound.New(w.t, 0)
	bound.Observe(func() string { return fmt.Sprintf("%d clones refused", refused()) })
	if !bound.Until(func() bool { return refused() == len(w.cs) }) {
		w.t.Logf("not every clone was refused: %v", bound.Err())
	}
	w.t.Logf("%d of %d clones refused after %.1fs", refused(), len(w.cs), time.Since(w.start).Seconds())
}

// TestWorldForcePush: mid-drain a person force-pushes the board branch
// back to where it was before the agents started (git push -f, "to undo
// a mistake") and commits on top of it: every claim and done so far
// vanish from the remote. Every
// clone refuses (exit 8, the agents wait); one clone runs pickup sync
// --repair; the drain ends with every session claimed once and finished
// once.
func TestWorldForcePush(t *testing.T) {
	t.Parallel()
	w := midDrain(t)
	// The agents pause while the person works: their pushes would
	// starve the person's on a slow machine.
	w.paused(func() {
		p := w.r.person()
		p.retry(func() error {
			p.fetch()
			return p.tryGit("push", "-q", "-f", "origin", w.created+":refs/heads/pickup")
		})
		// ... and goes on working on the branch so rewound: a commit of its
		// own on top (so that a clone's next push is no fast-forward that
		// would silently put the lost commits back).
		p.retry(func() error {
			p.fetch()
			p.git("checkout", "-q", "-B", "pickup", "origin/pickup")
			f, err := os.OpenFile(filepath.Join(p.dir, ".gitattributes"), os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			fmt.Fprintln(f, "# reviewed")
			f.Close()
			p.git("commit", "-q", "-am", "review the attributes")
			return p.tryGit("push", "-q", "origin", "pickup:refs/heads/pickup")
		})
	})
	w.refusedEverywhere()
	w.act(w.cs[1], "sync", "--repair")
	f := w.finish()
	if f.exit8 == 0 {
		t.Errorf("no agent was refused after the force push")
	}
	if t.Failed() {
		t.Logf("agents' stderr:\n%s", w.errLogs())
	}
}

// TestWorldDeleteBranch: a person deletes the board branch mid-drain
// (git push origin :pickup); nobody re-creates it as a side effect; a
// person re-creates it with pickup init --shared in one clone.
func TestWorldDeleteBranch(t *testing.T) {
	t.Parallel()
	w := midDrain(t)
	// The agents pause while the person works: their pushes would
	// starve the person's on a slow machine.
	w.paused(func() {
		p := w.r.person()
		p.retry(func() error { return p.tryGit("push", "-q", "origin", ":refs/heads/pickup") })
	})
	w.refusedEverywhere()
	if tip := w.r.tip(); tip != "" {
		t.Errorf("the deleted branch was re-created by an agent's command (at %s)", tip)
	}
	w.act(w.cs[2], "init", "--shared")
	f := w.finish()
	if f.exit8 == 0 {
		t.Errorf("no agent was refused after the deletion")
	}
	if t.Failed() {
		t.Logf("agents' stderr:\n%s", w.errLogs())
	}
}

// TestWorldConfigDeleted: a person deletes config.yaml on the board
// branch mid-drain: no clone stops being shared (the agents are refused,
// nothing is claimed twice, no id loses its clone suffix); pickup init
// --shared in one clone puts it back.
func TestWorldConfigDeleted(t *testing.T) {
	t.Parallel()
	w := midDrain(t)
	// The agents pause while the person works: their pushes would
	// starve the person's on a slow machine.
	w.paused(func() {
		p := w.r.person()
		p.retry(func() error {
			p.fetch()
			p.git("checkout", "-q", "-B", "pickup", "origin/pickup")
			p.git("rm", "-q", "config.yaml")
			p.git("commit", "-q", "-m", "remove the board's settings")
			return p.tryGit("push", "-q", "origin", "pickup:refs/heads/pickup")
		})
	})
	w.refusedEverywhere()
	w.act(w.cs[0], "init", "--shared")
	f := w.finish()
	if f.exit8 == 0 {
		t.Errorf("no agent was refused after config.yaml went")
	}
	if got := w.r.git(w.r.bare, "show", "pickup:config.yaml"); !strings.Contains(got, "shared: origin") {
		t.Errorf("config.yaml on the branch: %q", got)
	}
	if t.Failed() {
		t.Logf("agents' stderr:\n%s", w.errLogs())
	}
}

// TestWorldHandMoves: mid-drain a person moves three sessions (tagged
// byhand, which the agents leave alone) from todo/ to done/ by hand (git mv, commit, push on the board branch: a forward
// commit that pickup did not make). The clones take it as the board's
// history moving forward: the three are never claimed, the others are
// claimed once, and every clone agrees.
func TestWorldHandMoves(t *testing.T) {
	t.Parallel()
	// Three sessions tagged byhand: the agents leave them to the person
	// (next --not-tag byhand), however slow the machine is.
	var low []string
	w := drainUntil(t, worldSessions/5, func(w *gitWorld) {
		for i := range 3 {
			out := w.cs[0].must("", "new", "--tag", "byhand", "--title", fmt.Sprint("by hand ", i), "-")
			low = append(low, firstField(out))
		}
		w.ids = append(w.ids, low...)
	})
	w.byHand = map[string]bool{}
	// The agents pause while the person works: their pushes would
	// starve the person's on a slow machine.
	w.paused(func() {
		p := w.r.person()
		p.retry(func() error {
			p.fetch()
			p.git("checkout", "-q", "-B", "pickup", "origin/pickup")
			moved := map[string]bool{}
			for _, id := range low {
				if _, err := os.Stat(filepath.Join(p.dir, "todo", id+".md")); err != nil {
					t.Fatalf("the agents took %s, tagged byhand:\n%s", id, p.git("ls-tree", "-r", "--name-only", "HEAD"))
				}
				p.git("mv", "todo/"+id+".md", "done/"+id+".md")
				moved[id] = true
			}
			p.git("commit", "-q", "-m", "these are done already")
			err := p.tryGit("push", "-q", "origin", "pickup:refs/heads/pickup")
			if err == nil {
				w.byHand = moved
			}
			return err
		})
	})
	f := w.finish()
	if f.exit8 != 0 {
		t.Errorf("a forward commit by a person made agents exit 8 (%d times)", f.exit8)
	}
	if t.Failed() {
		t.Logf("agents' stderr:\n%s", w.errLogs())
	}
}

// tryGit runs git in the person's clone and returns its failure (a push
// that others beat) instead of failing the test.
func (p *person) tryGit(args ...string) error {
	out, err := gitCmd(p.r, p.dir, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// retry runs act until it succeeds, as a person whose push the agents
// beat tries again (at most 30 times).
func (p *person) retry(act func() error) {
	p.r.t.Helper()
	var err error
	for range 30 {
		if err = act(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.r.t.Fatalf("the person gave up: %v", err)
}

// act is the repair a person makes in clone c: a failure is reported,
// and the drain goes on to be measured.
func (w *gitWorld) act(c *clone, args ...string) {
	w.t.Helper()
	if res := c.pickup(context.Background(), "", args...); res.code != 0 {
		w.t.Errorf("%s: pickup %s: exit %d\n%s", c.name, strings.Join(args, " "), res.code, res.stderr)
	}
}
