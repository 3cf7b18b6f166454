package sharedways

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbound"
)

// The world acting on a shared board while agents work: a person with
// git (force push, deleted branch, config.yaml edited, sessions moved by
// hand), a pushing process killed. Each scenario checks afterwards that
// every session was claimed exactly once, finished once, and is in exactly
// one state on the remote and in every clone; and logs its figures
// (sessions, double claims, lost, hung commands) so that an older build
// can be measured with SHAREDWAYS_PICKUP=/path/to/pickup.

// person is a plain clone of the remote where a person works with git.
type person struct {
	r   *remote
	dir string
}

func (r *remote) person() *person {
	r.t.Helper()
	p := &person{r: r, dir: filepath.Join(filepath.Dir(r.home), "person")}
	if _, err := os.Stat(p.dir); err != nil {
		r.git(filepath.Dir(r.home), "clone", "-q", r.url, p.dir)
	}
	return p
}

// git runs git in the person's clone.
func (p *person) git(args ...string) string {
	p.r.t.Helper()
	return p.r.git(p.dir, args...)
}

// fetch brings the board branch to the person's origin/pickup.
func (p *person) fetch() {
	p.git("fetch", "-q", "origin", "+refs/heads/pickup:refs/remotes/origin/pickup")
}

// tip is the remote's board branch ("" if there is none).
func (r *remote) tip() string {
	cmd := exec.Command("git", "rev-parse", "-q", "--verify", "refs/heads/pickup")
	cmd.Dir = r.bare
	cmd.Env = baseEnv(r.home)
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

// gitAgentScript is an agent as a careful script: it claims with
// $(pickup next --not-tag byhand --json) (sessions tagged byhand are a
// person's), finishes with done, and when pickup says the
// shared board's remote failed (exit 8: unreachable, rewritten) it waits
// and tries again, as its hint says, instead of giving up the session.
// $1 the clone, $2 the log directory, $3 how many subshells.
const gitAgentScript = `#!/bin/bash
cd "$1" || exit 2
for n in $(seq 1 "$3"); do
  (
    owner="$(basename "$1")-w$n"
    while :; do
      out=$(pickup --owner "$owner" next --not-tag byhand --json 2>>"$2/$owner.err"); rc=$?
      case $rc in
        0) ;;
        3) [ -e "$2/stop" ] && break; sleep 0.2; continue ;;
        8) echo "next 8" >> "$2/$owner.rc8"; sleep 0.2; continue ;;
        *) echo "next exit $rc" >> "$2/errors"; sleep 0.2; continue ;;
      esac
      id=$(printf '%s' "$out" | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')
      [ -n "$id" ] || { echo "next said $out" >> "$2/errors"; continue; }
      echo "$id" >> "$2/$owner"
      sleep 0.3 # the work
      while :; do
        pickup --owner "$owner" done "$id" > /dev/null 2>>"$2/$owner.err"; rc=$?
        case $rc in
          0) echo "$id" >> "$2/$owner.done"; break ;;
          8) echo "done 8" >> "$2/$owner.rc8"; sleep 0.2 ;;
          *) echo "done $id exit $rc ($owner)" >> "$2/errors"; break ;;
        esac
      done
    done
  ) &
done
wait
`

// gitWorld is a drain by script agents in several clones.
type gitWorld struct {
	t *testing.T
	// byHand: sessions a person moved to done/ by hand; never claimed.
	byHand map[string]bool
	r      *remote
	cs     []*clone
	ids    []string
	logs   string
	cmds   []*exec.Cmd
	// created is the board branch's tip once the sessions were made,
	// before any agent ran.
	created string
	// watch bounds the drain from its last progress (a session claimed
	// or finished): a hung agent is killed and counted, however long the
	// drain runs on a slow machine.
	watch *testbound.Watch
	start time.Time
}

// newGitWorld makes a remote, n clones with agents subshells each, and
// sessions sessions, spread over the clones; start runs the agents.
func newGitWorld(t *testing.T, n, sessions int) *gitWorld {
	r := newRemote(t, "daemon")
	cs := r.clones(n)
	w := &gitWorld{t: t, r: r, cs: cs, ids: createFromAll(t, cs, sessions/n), logs: filepath.Join(t.TempDir(), "logs")}
	w.created = r.tip()
	if err := os.MkdirAll(w.logs, 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

// startAgents runs the agent script in every clone with agents subshells.
// The scripts are killed (and counted as hung) when no session was
// claimed or finished for testbound.Idle.
func (w *gitWorld) startAgents(agents int) {
	t := w.t
	_, script, bin := agentFiles(t, gitAgentScript, pickupBinary(t))
	w.watch = testbound.New(t, 0)
	w.watch.Observe(func() string { return movedLines(w.logs, ".err", ".rc8", "errors") })
	ctx := w.watch.Context()
	w.start = time.Now()
	for _, c := range w.cs {
		cmd := exec.CommandContext(ctx, script, c.dir, w.logs, fmt.Sprint(agents))
		cmd.Env = append(baseEnv(w.r.home), "PATH="+bin+":"+os.Getenv("PATH"))
		// The whole script's process group dies when the drain stalls: a
		// hung pickup is counted, not waited for.
		cmd.SysProcAttr = groupAttr()
		cmd.Cancel = func() error { return killGroup(cmd) }
		cmd.WaitDelay = time.Second
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.cmds = append(w.cmds, cmd)
	}
	t.Cleanup(func() {
		for _, cmd := range w.cmds {
			_ = killGroup(cmd)
		}
	})
}

// paused runs act while every agent script is stopped (SIGSTOP to its
// process group, SIGCONT after): a person's git push that must land
// mid-drain is not starved by six agents pushing on a slow machine. The
// agents meet what the person did when they resume.
func (w *gitWorld) paused(act func()) {
	for _, cmd := range w.cmds {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGSTOP)
	}
	defer func() {
		for _, cmd := range w.cmds {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
		}
	}()
	act()
}

// movedLines is the number of lines in the log directory's files whose
// names end in none of skip: the agents' claims and finishes, the
// progress of a drain.
func movedLines(dir string, skip ...string) string {
	entries, _ := os.ReadDir(dir)
	n := 0
next:
	for _, e := range entries {
		for _, suffix := range skip {
			if strings.HasSuffix(e.Name(), suffix) {
				continue next
			}
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		n += strings.Count(string(data), "\n")
	}
	return fmt.Sprintf("%d claims and finishes logged", n)
}

// doneOnRemote counts the remote's sessions in done/.
func (w *gitWorld) doneOnRemote() int {
	n := 0
	for _, f := range w.r.branchFiles() {
		if strings.HasPrefix(f, "done/") {
			n++
		}
	}
	return n
}

// pollFor polls cond until it holds (true), or until testbound.Idle
// passed (false): a bound for one step, which catches a hang however slow
// the machine is.
func pollFor(t testing.TB, cond func() bool) bool { return testbound.New(t, 0).Until(cond) }

// finish tells the agents to stop once nothing is left, waits for them
// (hung: still running at the deadline) and returns the figures.
func (w *gitWorld) finish() figures {
	if err := os.WriteFile(filepath.Join(w.logs, "stop"), nil, 0o644); err != nil {
		w.t.Fatal(err)
	}
	hung := 0
	for _, cmd := range w.cmds {
		if err := cmd.Wait(); err != nil {
			hung++
			w.t.Errorf("agent script: %v (%v)", err, w.watch.Err())
		}
	}
	return w.figures(hung)
}

// figures is what a scenario measures.
type figures struct {
	sessions, doubleClaims, doubleDone, lost, hung int
	exit8                                          int
	took                                           time.Duration
}

func (f figures) String() string {
	return fmt.Sprintf("sessions %d, double claims %d, finished twice %d, lost %d, hung %d (exit 8 answers %d) in %.1fs",
		f.sessions, f.doubleClaims, f.doubleDone, f.lost, f.hung, f.exit8, f.took.Seconds())
}

// figures reads the agents' logs and the boards, and reports every
// session that was not claimed exactly once, finished once and is in
// done/ only, on the remote and in every clone after a sync.
func (w *gitWorld) figures(hung int) figures {
	t := w.t
	f := figures{sessions: len(w.ids), hung: hung, took: time.Since(w.start)}
	claimedBy, doneBy := map[string][]string{}, map[string][]string{}
	entries, _ := os.ReadDir(w.logs)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(w.logs, e.Name()))
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".rc8"):
			f.exit8 += strings.Count(string(data), "\n")
		case name == "errors":
			t.Errorf("the agents saw:\n%s", data)
		case strings.HasSuffix(name, ".err") || name == "stop":
		case strings.HasSuffix(name, ".done"):
			for _, id := range strings.Fields(string(data)) {
				doneBy[id] = append(doneBy[id], strings.TrimSuffix(name, ".done"))
			}
		default:
			for _, id := range strings.Fields(string(data)) {
				claimedBy[id] = append(claimedBy[id], name)
			}
		}
	}
	for _, id := range w.ids {
		if w.byHand[id] {
			if len(claimedBy[id]) > 0 {
				f.doubleClaims++
				t.Errorf("%s, moved to done/ by hand, was claimed by %v", id, claimedBy[id])
			}
			continue
		}
		if len(claimedBy[id]) > 1 {
			f.doubleClaims++
			t.Errorf("%s claimed by %v, want one agent", id, claimedBy[id])
		}
		if len(doneBy[id]) > 1 {
			f.doubleDone++
			t.Errorf("%s finished by %v, want one", id, doneBy[id])
		}
	}
	remoteDone := map[string]bool{}
	for _, id := range w.ids {
		if at := w.r.where(id); len(at) == 1 && at[0] == "done" {
			remoteDone[id] = true
		} else {
			t.Errorf("the remote has %s in %v, want [done]", id, at)
		}
		if (!w.byHand[id] && (len(claimedBy[id]) == 0 || len(doneBy[id]) == 0)) || !remoteDone[id] {
			f.lost++
		}
	}
	for _, c := range w.cs {
		if res := c.pickup(context.Background(), "", "sync"); res.code != 0 {
			t.Errorf("%s: sync: exit %d\n%s", c.name, res.code, res.stderr)
		}
		for _, id := range w.ids {
			if at := c.localWhere(id); len(at) != 1 || at[0] != "done" {
				t.Errorf("clone %s has %s in %v, want [done]", c.name, id, at)
			}
		}
	}
	t.Logf("figures: %s", f)
	return f
}

// errLogs is what the agents printed on stderr, for a failing test.
func (w *gitWorld) errLogs() string {
	var b strings.Builder
	entries, _ := os.ReadDir(w.logs)
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".err") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		data, _ := os.ReadFile(filepath.Join(w.logs, n))
		fmt.Fprintf(&b, "== %s\n%s", n, data)
	}
	return b.String()
}
