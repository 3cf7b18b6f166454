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
	"github.com/pickup-dev/pickup/internal/testbound"
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
// subshells drain 200 sessions (PICKUP_TEST_SCALE=4 makes it the soak of
// 800) on a PostgreSQL board whose history goes to the clones' remote
// every second (history_every's least): after a final pickup sync, the
// remote's board branch records every session made, claimed and done
// exactly once, its tree is the board (all done), the pushes were batched
// (at most one per interval, one pusher at a time) and the drain's own
// commands pushed as it went.
//
// When those pushes land depends on what a push costs here, not only on
// the interval: the pusher is a process of its own (a fetch, a commit, a
// push) beside 16 busy agents, seconds on a busy machine, and a command
// that finds a push due while another pusher is still at work lets its
// turn go. So a pickup sync pushes the sessions made just before the
// drain (the drain starts with nothing waiting and its interval running),
// the test waits for the pushers the drain started before it reads what
// landed, and it asks for a second push only when the drain went on
// past the first long enough for one more turn (an interval and that
// push's own cost, as measured in this run: its pusher still has to let
// go). 200 sessions make the drain long enough for that here.
func TestHistoryDrainFourByFour(t *testing.T) {
	db, url := newDatabase(t)
	r := newGitRemote(t)
	const every = time.Second
	cs := r.clones(url, 4, every.String())
	ids := createFromAll(t, cs, testbound.Scaled(t, 200, 40))
	synced := time.Now()
	cs[0].must("", "sync")
	ctx := context.Background() // startAgents bounds the drain from its last claim
	start := time.Now()
	d := startAgents(t, ctx, cs, 4)
	claims := d.wait()
	drained := time.Now()
	took := drained.Sub(start)
	// A pusher that a command of the drain started may land after it.
	testbin.WaitDetached(r.root)
	all, _, _ := r.pushes()
	pushed := landedAfter(all, start)
	out := cs[0].must("", "sync")
	if !strings.Contains(out, "history: ") {
		t.Errorf("sync said nothing of the history:\n%s", out)
	}
	checkDrained(t, db, cs, ids, claims)
	r.checkBranchHistory(ids)
	r.checkBranchMatchesDB(db)
	landed, overlap, log := r.pushes()
	t.Logf("drain of %d in %v; its commands pushed %d times (%d pushes in all, with the syncs)",
		len(ids), took.Round(time.Millisecond), len(pushed), len(landed))
	if len(pushed) > 0 {
		// Attempts are spaced by the interval on the server's clock; a
		// push lands a fetch and a commit later, which varies by up to a
		// second here.
		span := pushed[len(pushed)-1].Sub(pushed[0])
		if limit := int(math.Ceil(float64(span+time.Second)/float64(every))) + 1; len(pushed) > limit {
			t.Errorf("%d pushes over %v, want at most %d (one per %v)\n%s", len(pushed), span, limit, every, log)
		}
	}
	if overlap {
		t.Errorf("two pushes were at the remote at once:\n%s", log)
	}
	// The sync's turn ended at the drain's start at the latest: a
	// command of the drain found the next due an interval later.
	if len(pushed) == 0 {
		if took > 2*every {
			t.Errorf("the drain's commands pushed no history in %v with a %v interval:\n%s", took, every, log)
		}
		return
	}
	// The first push's cost: from when its turn came due at the earliest
	// (the sync's turn started after synced) to when it landed.
	first := pushed[0]
	cost := first.Sub(synced.Add(every))
	if after := drained.Sub(first); after > every+cost && len(pushed) < 2 {
		t.Errorf("the drain's commands pushed once, and not again in the %v the drain went on after it (interval %v, that push %v): the history was not pushed in batches as it went\n%s",
			after, every, cost, log)
	} else if after <= every+cost {
		t.Logf("the drain ended %v after its first push (which took up to %v): too soon to ask for a second", after.Round(time.Millisecond), cost.Round(time.Millisecond))
	}
	if n := server.psql(t, db, "SELECT count(*) FROM pickup_events WHERE NOT pushed"); n != "0" {
		t.Errorf("%s events are not marked pushed after sync", n)
	}
}

// landedAfter is the pushes of landed that landed after t.
func landedAfter(landed []time.Time, t time.Time) []time.Time {
	var out []time.Time
	for _, at := range landed {
		if at.After(t) {
			out = append(out, at)
		}
	}
	return out
}

// checkBranchMatchesDB asserts that the branch lists each session's
// transitions exactly as the database has them (none lost, none twice)
// and that every event is marked pushed.
func (r *gitRemote) checkBranchMatchesDB(db string) {
	r.t.Helper()
	ops, commits := r.branchHistory()
	want := map[string]string{}
	for _, line := range strings.Split(server.psql(r.t, db, `SELECT id, string_agg(op, ',' ORDER BY seq) FROM pickup_events GROUP BY id`), "\n") {
		id, o, _ := strings.Cut(line, "|")
		want[id] = o
	}
	bad := 0
	for id, o := range want {
		if got := strings.Join(ops[id], ","); got != o {
			bad++
			if bad <= 5 {
				r.t.Errorf("%s's history on the branch is %q, the database's %q", id, got, o)
			}
		}
	}
	if len(ops) != len(want) {
		r.t.Errorf("the branch names %d sessions, the database %d", len(ops), len(want))
	}
	if n := server.psql(r.t, db, "SELECT count(*) FROM pickup_events WHERE NOT pushed"); n != "0" {
		r.t.Errorf("%s events are not marked pushed (%d commits on the branch)", n, commits)
	}
}

// waitLog waits until the hooks' log has n lines that start with kind.
func (r *gitRemote) waitLog(kind string, n int) {
	r.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if r.count(kind) >= n {
			return
		}
		if time.Now().After(deadline) {
			_, _, log := r.pushes()
			r.t.Fatalf("the remote's log never showed %d lines %q:\n%s", n, kind, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// count is how many lines of the hooks' log start with kind.
func (r *gitRemote) count(kind string) int {
	_, _, log := r.pushes()
	return strings.Count("\n"+log, "\n"+kind+" ")
}

// pending is how many events the database has not marked pushed.
func pending(t *testing.T, db string) int {
	n, _ := strconv.Atoi(server.psql(t, db, "SELECT count(*) FROM pickup_events WHERE NOT pushed"))
	return n
}

func touch(t *testing.T, path string) {
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// finishSome claims and finishes n sessions on c.
func finishSome(t *testing.T, c *clone, owner string, n int) {
	for range n {
		out := c.must(owner, "next", "--json")
		_, rest, ok := strings.Cut(out, `"id":`)
		if !ok {
			t.Fatalf("next --json said no id:\n%s", out)
		}
		id, _, _ := strings.Cut(strings.TrimLeft(rest, ` "`), `"`)
		c.must(owner, "done", id)
	}
}

// TestHistoryPusherKilled: a pusher killed while its push waits at the
// remote (which then refuses it) loses nothing, and does not hold the
// next one back: the next sync pushes every transition. A pusher that
// died after its push landed but before the database recorded it (its
// events unmarked) is reconciled from the commit's trailer: the next
// batch lists no transition twice.
func TestHistoryPusherKilled(t *testing.T) {
	db, url := newDatabase(t)
	r := newGitRemote(t)
	cs := r.clones(url, 2, "1h") // one push at the first command, then sync's
	createFromAll(t, cs, 20)
	finishSome(t, cs[1], "w1", 3)
	testbin.WaitDetached(r.root)
	waiting := pending(t, db)
	if waiting == 0 {
		t.Fatal("no transition waits for the history")
	}
	starts := r.count("start")
	touch(t, filepath.Join(r.bare, "hold"))
	cmd := exec.Command(filepath.Join(bin, "pickup"), "--dir", cs[0].dir, "sync")
	cmd.Env = env(cs[0].home)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.waitLog("start", starts+1)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	// Its git push outlives it, waiting at the remote: refused there.
	touch(t, filepath.Join(r.bare, "refuse"))
	os.Remove(filepath.Join(r.bare, "hold"))
	r.waitLog("end-refused", 1)
	if n := pending(t, db); n != waiting {
		t.Fatalf("%d events wait after the killed push, want %d", n, waiting)
	}
	os.Remove(filepath.Join(r.bare, "refuse"))
	finishSome(t, cs[1], "w1", 5)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := pending(t, db)
	res := cs[1].pickup(ctx, "", "sync")
	if res.code != 0 || !strings.Contains(res.stdout, fmt.Sprintf("history: pushed %d transitions to origin pickup", want)) {
		t.Fatalf("sync after the killed pusher (%d waiting): exit %d\n%s%s", want, res.code, res.stdout, res.stderr)
	}
	r.checkBranchMatchesDB(db)

	// Died between its push and its mark: the last batch's events are
	// on the branch but unmarked.
	server.psql(t, db, "UPDATE pickup_events SET pushed = false WHERE seq > (SELECT max(seq) - 10 FROM pickup_events)")
	finishSome(t, cs[0], "w0", 2)
	res = cs[0].pickup(ctx, "", "sync")
	if res.code != 0 || !strings.Contains(res.stdout, "history: pushed 4 transitions") {
		t.Fatalf("sync after an unmarked push: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	r.checkBranchMatchesDB(db)
}

// TestHistoryRemoteStalls: a remote that holds the history's push and
// then refuses it does not hold back claims: 2 clones × 2 agents drain 40
// sessions while the push waits at the remote; status says the history
// waits and, once the remote refused, that the last push failed; after
// the remote accepts again, sync pushes it all.
func TestHistoryRemoteStalls(t *testing.T) {
	db, url := newDatabase(t)
	r := newGitRemote(t)
	cs := r.clones(url, 2, "1s")
	touch(t, filepath.Join(r.bare, "hold"))
	ids := createFromAll(t, cs, 40)
	ctx := context.Background() // startAgents bounds the drain from its last claim
	d := startAgents(t, ctx, cs, 2)
	claims := d.wait()
	if n := doneCount(t, db); n != len(ids) {
		t.Fatalf("%d sessions done, want %d", n, len(ids))
	}
	landed, _, log := r.pushes()
	if !strings.Contains(log, "start ") || len(landed) != 0 {
		t.Fatalf("no history push waited at the remote during the drain:\n%s", log)
	}
	if out := cs[0].must("", "status"); !strings.Contains(out, "history: to origin pickup every 1s: nothing pushed yet, 120 transitions waiting") {
		t.Errorf("status while the remote holds the push:\n%s", out)
	}
	touch(t, filepath.Join(r.bare, "refuse"))
	os.Remove(filepath.Join(r.bare, "hold"))
	r.waitLog("end-refused", 1)
	testbin.WaitDetached(r.root)
	said := ""
	for _, c := range cs {
		said += c.must("", "status")
	}
	if !strings.Contains(said, "last push from this board failed") || !strings.Contains(said, "pre-receive hook declined") {
		t.Errorf("status does not say that the last push failed:\n%s", said)
	}
	os.Remove(filepath.Join(r.bare, "refuse"))
	// sync pushes them, unless a push that a command started after the
	// remote came back was first.
	out := cs[1].must("", "sync")
	if !strings.Contains(out, "history: pushed 120 transitions") && !strings.Contains(out, "history: origin pickup has every transition") {
		t.Errorf("sync after the remote came back:\n%s", out)
	}
	r.checkBranchMatchesDB(db)
	checkDrained(t, db, cs, ids, claims)
}

// TestHistoryMigratesOldBoard: a database whose schema is from before the
// history (version 2) is migrated by the next command, and its past
// transitions land on the branch with the first batch.
func TestHistoryMigratesOldBoard(t *testing.T) {
	db, url := newDatabase(t)
	r := newGitRemote(t)
	cs := r.clones(url, 1, "1h")
	c := cs[0]
	testbin.WaitDetached(r.root)
	server.psql(t, db, `DROP TABLE pickup_history; ALTER TABLE pickup_events DROP COLUMN pushed; UPDATE pickup_schema SET version = 2`)
	// Sessions made by a pickup of version 2: their events wait.
	server.psql(t, db, `INSERT INTO pickup_sessions (id, state, body, version, last_op) VALUES ('2026-01-01_00-00-00', 'todo', convert_to(E'old\n', 'UTF8'), nextval('pickup_version'), 'new');
		INSERT INTO pickup_events (id, op, src, dst, version) VALUES ('2026-01-01_00-00-00', 'new', '', 'todo', currval('pickup_version'))`)
	// A helper of its own (the daemon's connections checked the schema
	// already): as a newer pickup would.
	if res := c.pickupEnv(context.Background(), "w", []string{"PICKUP_PG_DAEMON=0"}, "next"); res.code != 0 {
		t.Fatalf("next: exit %d\n%s", res.code, res.stderr)
	}
	if v := server.psql(t, db, "SELECT version FROM pickup_schema"); v == "2" {
		t.Fatalf("the schema is still at version 2")
	}
	res := c.pickupEnv(context.Background(), "", []string{"PICKUP_PG_DAEMON=0"}, "sync")
	// (The next's read found a push due: it may have pushed them first.)
	if res.code != 0 || !strings.Contains(res.stdout, "history: ") {
		t.Errorf("sync after the migration: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	r.checkBranchMatchesDB(db)
	if got := r.git(r.bare, "show", "pickup:doing/w/2026-01-01_00-00-00.md"); got != "old\n" {
		t.Errorf("the branch's tree has the session as %q", got)
	}
}

// TestHistoryOnePusher: while one pusher's push waits at the remote, a
// second pickup sync (on another clone) does not push beside it: it waits
// for the first, then finds the branch complete or pushes what is left.
func TestHistoryOnePusher(t *testing.T) {
	db, url := newDatabase(t)
	r := newGitRemote(t)
	cs := r.clones(url, 2, "1h")
	createFromAll(t, cs, 10)
	testbin.WaitDetached(r.root)
	finishSome(t, cs[0], "w0", 2)
	starts := r.count("start")
	touch(t, filepath.Join(r.bare, "hold"))
	first := exec.Command(filepath.Join(bin, "pickup"), "--dir", cs[0].dir, "sync")
	first.Env = env(cs[0].home)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	r.waitLog("start", starts+1)
	second := exec.Command(filepath.Join(bin, "pickup"), "--dir", cs[1].dir, "sync")
	second.Env = env(cs[1].home)
	var out strings.Builder
	second.Stdout, second.Stderr = &out, &out
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // ample for a second push to reach the remote
	if n := r.count("start"); n != starts+1 {
		_, _, log := r.pushes()
		t.Errorf("%d pushes at the remote at once, want 1:\n%s", n-starts, log)
	}
	os.Remove(filepath.Join(r.bare, "hold"))
	if err := first.Wait(); err != nil {
		t.Errorf("the first sync: %v", err)
	}
	if err := second.Wait(); err != nil {
		t.Errorf("the second sync: %v\n%s", err, out.String())
	}
	if _, overlap, log := r.pushes(); overlap {
		t.Errorf("two pushes were at the remote at once:\n%s", log)
	}
	r.checkBranchMatchesDB(db)
}

// TestHistoryLongRunningWaiter: a process that runs for long (next
// --wait) and whose reads of the database find a push due starts the
// pusher at once; it does not sit on the turn until it exits.
func TestHistoryLongRunningWaiter(t *testing.T) {
	db, url := newDatabase(t)
	r := newGitRemote(t)
	cs := r.clones(url, 2, "1s")
	cs[1].must("", "new", "-t", "first")
	testbin.WaitDetached(r.root)
	cs[1].must("", "sync")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	waiter := exec.CommandContext(ctx, filepath.Join(bin, "pickup"), "--dir", cs[0].dir, "--owner", "waiter", "next", "--wait=50s", "--tag", "never")
	waiter.Env = env(cs[0].home)
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = waiter.Process.Kill(); _ = waiter.Wait() }()
	time.Sleep(1500 * time.Millisecond) // the sync's turn is over
	// Made with the interval not yet passed since its own read: only the
	// waiter's reads find this transition due.
	cs[1].must("", "new", "-t", "second")
	deadline := time.Now().Add(20 * time.Second)
	for pending(t, db) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the waiter took the turn and sat on it: %d transitions still wait after 20 s", pending(t, db))
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.checkBranchMatchesDB(db)
}
