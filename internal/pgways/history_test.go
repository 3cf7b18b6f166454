package pgways

import (
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbin"
)

// The history in git: the clones are clones of one bare repository served
// by git daemon on 127.0.0.1, whose hooks log every push.

// gitRemote is a bare repository served by git daemon.
type gitRemote struct {
	t    testing.TB
	root string
	bare string
	url  string
	home string
	cmd  *exec.Cmd
}

// pushLog's hooks: pre-receive writes "start <ns>" and, unless the test
// made it wait (a file "hold" in the bare repository: it waits while it
// exists) or refuse ("refuse"), "end <ns>"; post-receive writes "pushed
// <ns>" for each push that landed.
const preReceive = `#!/bin/sh
log="$GIT_DIR/pushes.log"
echo "start $(date +%s%N)" >> "$log"
cat > /dev/null
while [ -e "$GIT_DIR/hold" ]; do sleep 0.05; done
if [ -e "$GIT_DIR/refuse" ]; then echo "end-refused $(date +%s%N)" >> "$log"; echo "refused by the test" >&2; exit 1; fi
echo "end $(date +%s%N)" >> "$log"
`

const postReceive = `#!/bin/sh
cat > /dev/null
echo "pushed $(date +%s%N)" >> "$GIT_DIR/pushes.log"
`

func newGitRemote(t *testing.T) *gitRemote {
	t.Helper()
	root := t.TempDir()
	r := &gitRemote{t: t, root: root, bare: filepath.Join(root, "srv", "board.git"), home: filepath.Join(root, "home")}
	// Runs before root is removed: a history pusher that a command
	// started detached may still be at work there.
	t.Cleanup(func() { testbin.WaitDetached(root) })
	_ = os.MkdirAll(r.home, 0o755)
	r.git(root, "init", "-q", "--bare", r.bare)
	for name, body := range map[string]string{"pre-receive": preReceive, "post-receive": postReceive} {
		if err := os.WriteFile(filepath.Join(r.bare, "hooks", name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	exe := "/usr/lib/git-core/git-daemon"
	if _, err := os.Stat(exe); err != nil {
		exe = "git-daemon"
	}
	base := filepath.Join(root, "srv")
	r.cmd = exec.Command(exe, "--reuseaddr", "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port),
		"--base-path="+base, "--export-all", "--enable=receive-pack", base)
	r.cmd.Env = env(r.home)
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("git daemon: %v", err)
	}
	t.Cleanup(func() { _ = r.cmd.Process.Kill(); _ = r.cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("git daemon did not listen on %d: %v", port, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.url = fmt.Sprintf("git://127.0.0.1:%d/board.git", port)
	return r
}

func (r *gitRemote) git(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(env(r.home), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// clones makes n git clones of the remote, each with a board in board/
// shared through the database at url, its history pushed at most every
// `every`.
func (r *gitRemote) clones(url string, n int, every string) []*clone {
	r.t.Helper()
	var out []*clone
	for i := range n {
		top := filepath.Join(r.root, fmt.Sprintf("c%d", i))
		r.git(r.root, "clone", "-q", r.url, top)
		c := &clone{t: r.t, name: fmt.Sprintf("c%d", i), dir: filepath.Join(top, "board"), home: r.home}
		res := c.pickup(context.Background(), "", "init", "--shared", url)
		if res.code != 0 {
			r.t.Fatalf("init --shared in %s: exit %d\n%s", c.name, res.code, res.stderr)
		}
		if !strings.Contains(res.stdout, "history: to origin pickup") {
			r.t.Fatalf("init --shared in a clone did not send the history to origin:\n%s", res.stdout)
		}
		f, err := os.OpenFile(filepath.Join(c.dir, "config.yaml"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			r.t.Fatal(err)
		}
		fmt.Fprintf(f, "history_every: %s\n", every)
		f.Close()
		out = append(out, c)
	}
	return out
}

// pushes reads the hooks' log: the times of the pushes that landed, and
// whether two pushes were ever inside the remote at once.
func (r *gitRemote) pushes() (landed []time.Time, overlap bool, log string) {
	data, _ := os.ReadFile(filepath.Join(r.bare, "pushes.log"))
	inside := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		kind, ns, _ := strings.Cut(line, " ")
		v, _ := strconv.ParseInt(ns, 10, 64)
		switch kind {
		case "start":
			inside++
			if inside > 1 {
				overlap = true
			}
		case "end", "end-refused":
			inside--
		case "pushed":
			landed = append(landed, time.Unix(0, v))
		}
	}
	return landed, overlap, string(data)
}

// branchHistory reads the board branch's history on the remote: each
// session's transitions, oldest first, and how many commits.
func (r *gitRemote) branchHistory() (map[string][]string, int) {
	r.t.Helper()
	out := r.git(r.bare, "log", "--reverse", "--format=%x00%B", "pickup")
	ops := map[string][]string{}
	commits := 0
	for _, msg := range strings.Split(out, "\x00") {
		if strings.TrimSpace(msg) == "" {
			continue
		}
		commits++
		for _, line := range strings.Split(msg, "\n") {
			f := strings.Fields(line)
			// "id op src → dst by owner"
			if len(f) >= 5 && f[3] == "→" {
				ops[f[0]] = append(ops[f[0]], f[1])
			}
		}
	}
	return ops, commits
}

// checkBranchHistory asserts that the branch lists every session made,
// claimed and done exactly once, and that its tip's tree has each in done/.
func (r *gitRemote) checkBranchHistory(ids []string) {
	r.t.Helper()
	ops, commits := r.branchHistory()
	bad := 0
	for _, id := range ids {
		if got := strings.Join(ops[id], ","); got != "new,next,done" {
			bad++
			if bad <= 5 {
				r.t.Errorf("%s's history on the branch is %q, want new,next,done", id, got)
			}
		}
	}
	if bad > 0 || len(ops) != len(ids) {
		r.t.Errorf("%d of %d sessions have a wrong history on the branch (%d sessions there, %d commits)", bad, len(ids), len(ops), commits)
	}
	tree := strings.Fields(r.git(r.bare, "ls-tree", "-r", "--name-only", "pickup"))
	sort.Strings(tree)
	if len(tree) != len(ids) {
		r.t.Errorf("the branch's tree has %d files, want %d", len(tree), len(ids))
	}
	for _, p := range tree {
		if !strings.HasPrefix(p, "done/") {
			r.t.Errorf("the branch's tree has %s, want every session in done/", p)
			break
		}
	}
}

// TestHistoryDrainFourByFour: 4 git clones × an agent script of 4
// subshells drain 400 sessions on a PostgreSQL board whose history goes to
// the clones' remote every 2 s: after a final pickup sync, the remote's
// board branch records every session made, claimed and done exactly once,
// its tree is the board (all done), the pushes were batched (at most one
// per interval, one pusher at a time) and happened during the drain.
func TestHistoryDrainFourByFour(t *testing.T) {
	db, url := newDatabase(t)
	r := newGitRemote(t)
	const every = 2 * time.Second
	cs := r.clones(url, 4, every.String())
	ids := createFromAll(t, cs, 400)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	d := startAgents(t, ctx, cs, 4)
	claims := d.wait()
	took := time.Since(start)
	during, _, _ := r.pushes()
	out := cs[0].must("", "sync")
	if !strings.Contains(out, "history: ") {
		t.Errorf("sync said nothing of the history:\n%s", out)
	}
	checkDrained(t, db, cs, ids, claims)
	r.checkBranchHistory(ids)
	landed, overlap, log := r.pushes()
	span := landed[len(landed)-1].Sub(landed[0])
	limit := int(math.Ceil(float64(span)/float64(every))) + 1
	t.Logf("drain of %d in %v; %d pushes landed (%d during the drain) over %v, at most %d allowed by the interval %v",
		len(ids), took.Round(time.Millisecond), len(landed), len(during), span.Round(time.Millisecond), limit, every)
	if len(landed) > limit {
		t.Errorf("%d pushes over %v, want at most %d (one per %v)\n%s", len(landed), span, limit, every, log)
	}
	if overlap {
		t.Errorf("two pushes were at the remote at once:\n%s", log)
	}
	if took > 3*every && len(during) < 2 {
		t.Errorf("only %d pushes during a drain of %v with a %v interval: the history was not pushed in batches as it went", len(during), took, every)
	}
	if n := server.psql(t, db, "SELECT count(*) FROM pickup_events WHERE NOT pushed"); n != "0" {
		t.Errorf("%s events are not marked pushed after sync", n)
	}
}
