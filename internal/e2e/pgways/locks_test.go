package pgways

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
)

// sleeper starts a process that stands for an agent holding a lock (its
// --pid), killed at the end of the test.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	p := exec.Command("sleep", "300")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
	return p
}

func pidArg(p *exec.Cmd) string { return strconv.Itoa(p.Process.Pid) }

// TestLockAcrossBoards: two boards on one database (two clones of one
// machine: each has its own lock records, so only the database can make
// them exclude each other). A lock taken on one is held on the other
// (exit 3, naming its holder; exit 5 after --wait); a waiter there wakes
// when it is released; a holder that is SIGKILLed loses it at once on its
// own host; only the holder releases it.
func TestLockAcrossBoards(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	a, b := cs[0], cs[1]
	ana, bob := sleeper(t), sleeper(t)
	a.must("ana", "--pid", pidArg(ana), "lock", "acquire", "repo:main")
	res := b.pickup(context.Background(), "bob", "--pid", pidArg(bob), "lock", "acquire", "repo:main")
	if res.code != 3 || !strings.Contains(res.stderr, "ana") {
		t.Fatalf("bob's acquire on the other board: exit %d, want 3 naming ana\n%s", res.code, res.stderr)
	}
	if res := b.pickup(context.Background(), "bob", "lock", "check", "repo:main"); res.code != 3 || !strings.Contains(res.stdout+res.stderr, "ana") {
		t.Errorf("check on the other board: exit %d, want 3 naming ana\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := b.pickup(context.Background(), "bob", "--pid", pidArg(bob), "lock", "acquire", "repo:main", "--wait", "300ms"); res.code != 5 {
		t.Errorf("bob's acquire --wait 300ms: exit %d, want 5\n%s", res.code, res.stderr)
	}
	if got := server.psql(t, db, "SELECT owner FROM pickup_locks WHERE key = 'repo:main'"); got != "ana" {
		t.Fatalf("the database has the lock held by %q, want ana", got)
	}

	// bob waits; ana releases on her board: bob has it.
	waited := make(chan result, 1)
	go func() {
		// The fallback poll is an hour: only the NOTIFY of the release
		// can wake bob within his wait.
		waited <- b.pickupEnv(context.Background(), "bob", []string{"PICKUP_PG_POLL=1h"}, "--pid", pidArg(bob), "lock", "acquire", "repo:main", "--wait", "20s")
	}()
	time.Sleep(300 * time.Millisecond)
	a.must("ana", "lock", "release", "repo:main")
	if res := <-waited; res.code != 0 {
		t.Fatalf("bob's waiting acquire after ana's release: exit %d\n%s", res.code, res.stderr)
	}
	if got := server.psql(t, db, "SELECT owner FROM pickup_locks WHERE key = 'repo:main'"); got != "bob" {
		t.Fatalf("after the release the database has the lock held by %q, want bob", got)
	}
	if res := a.pickup(context.Background(), "ana", "lock", "release", "repo:main"); res.code != 3 {
		t.Errorf("ana releases bob's lock: exit %d, want 3\n%s", res.code, res.stderr)
	}

	// bob's agent is SIGKILLed: on this host the lock is free at once,
	// from the other board too.
	_ = bob.Process.Kill()
	_ = bob.Wait()
	a.must("cid", "--pid", pidArg(ana), "lock", "acquire", "repo:main")
	if got := server.psql(t, db, "SELECT owner FROM pickup_locks WHERE key = 'repo:main'"); got != "cid" {
		t.Errorf("after bob's death the database has the lock held by %q, want cid", got)
	}
	if res := b.pickup(context.Background(), "bob", "lock", "release", "repo:main"); res.code != 3 {
		t.Errorf("dead bob's late release: exit %d, want 3\n%s", res.code, res.stderr)
	}
	if out := b.must("", "lock", "list"); !strings.Contains(out, "cid") {
		t.Errorf("lock list on the other board does not show cid's lock:\n%s", out)
	}
	// cleanup on the other board removes the lock of a dead holder of
	// this host from the database, and never a live one's.
	b.must("", "lock", "cleanup")
	if got := server.psql(t, db, "SELECT count(*) FROM pickup_locks"); got != "1" {
		t.Fatalf("cleanup removed a live holder's lock: %s left", got)
	}
	_ = ana.Process.Kill()
	_ = ana.Wait()
	if out := b.must("", "lock", "cleanup"); !strings.Contains(out, "repo:main") {
		t.Errorf("cleanup does not report the dead holder's lock:\n%s", out)
	}
	if got := server.psql(t, db, "SELECT count(*) FROM pickup_locks"); got != "0" {
		t.Errorf("after cleanup the database has %s locks, want 0", got)
	}
}

// farPickup runs pickup on c's board as if on another machine: in a UTS
// namespace of its own whose hostname is far.invalid (unshare, as root),
// so its locks and leases name that host.
func farPickup(t *testing.T, c *clone, owner string, args ...string) result {
	t.Helper()
	return farPickupIn(t, c, nil, "", append([]string{"--dir", c.dir, "--owner", owner}, args...)...)
}

// farPickupIn is farPickup with more environment, standard input, and
// the arguments as given.
func farPickupIn(t *testing.T, c *clone, extra []string, stdin string, args ...string) result {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("another host is simulated with unshare --uts, which needs root")
	}
	all := append([]string{"--uts", "sh", "-c", `hostname far.invalid && exec "$0" "$@"`, filepath.Join(bin, "pickup")}, args...)
	cmd := exec.Command("unshare", all...)
	cmd.Dir = filepath.Dir(c.dir)
	cmd.Env = append(env(c.home), extra...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("unshare pickup %v: %v", args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// TestLockHeldOnAnotherHost: a lock taken on another host (its process
// cannot be checked here) is held here while its holder heartbeats,
// longer than its TTL, and is taken here once it has been silent for its
// TTL on the server's clock; the former holder is then told it lost it.
func TestLockHeldOnAnotherHost(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	far, here := cs[0], cs[1]
	if res := farPickup(t, far, "faraway", "lock", "acquire", "deploy", "--ttl", "2s"); res.code != 0 {
		t.Fatalf("acquire on the far host: exit %d\n%s", res.code, res.stderr)
	}
	if got := server.psql(t, db, "SELECT process->>'host' FROM pickup_locks WHERE key = 'deploy'"); got != "far.invalid" {
		t.Fatalf("the lock's host is %q, want far.invalid", got)
	}
	me := sleeper(t)
	deadline := time.Now().Add(4 * time.Second) // twice the TTL
	for time.Now().Before(deadline) {
		if res := farPickup(t, far, "faraway", "lock", "heartbeat", "deploy"); res.code != 0 {
			t.Fatalf("heartbeat on the far host: exit %d\n%s", res.code, res.stderr)
		}
		if res := here.pickup(context.Background(), "near", "--pid", pidArg(me), "lock", "acquire", "deploy"); res.code != 3 {
			t.Fatalf("acquire here while the far holder heartbeats: exit %d, want 3\n%s", res.code, res.stderr)
		}
		time.Sleep(400 * time.Millisecond)
	}
	// The far holder falls silent: after its TTL the lock is stale here
	// (a waiter sees it by its poll) and taken over.
	if res := here.pickup(context.Background(), "near", "--pid", pidArg(me), "lock", "acquire", "deploy", "--wait", "20s"); res.code != 0 {
		t.Fatalf("acquire --wait here after the far holder fell silent: exit %d\n%s", res.code, res.stderr)
	}
	if got := server.psql(t, db, "SELECT owner FROM pickup_locks WHERE key = 'deploy'"); got != "near" {
		t.Fatalf("the database has the lock held by %q, want near", got)
	}
	if res := farPickup(t, far, "faraway", "lock", "heartbeat", "deploy"); res.code != 3 {
		t.Errorf("the far holder's late heartbeat: exit %d, want 3\n%s", res.code, res.stderr)
	}
	// From the far host, near (another host for it) holds it within its
	// TTL (the default 10m).
	if res := farPickup(t, far, "faraway", "lock", "acquire", "deploy"); res.code != 3 || !strings.Contains(res.stderr, "near") {
		t.Errorf("the far host's acquire of near's lock: exit %d, want 3 naming near\n%s", res.code, res.stderr)
	}
}

// lockScript is an agent as a shell script: $3 subshells each run a
// critical section $4 times under `pickup lock run`, a read, a pause and
// a write of a counter file that every board's agents share. Without one
// holder across boards, increments are lost.
const lockScript = `#!/bin/bash
board=$1 counter=$2 jobs=$3 rounds=$4
for n in $(seq 1 "$jobs"); do
  (
    for r in $(seq 1 "$rounds"); do
      pickup --dir "$board" --owner "w$n" lock run counter --wait 120s -- \
        bash -c 'n=$(cat "$0"); sleep 0.02; echo $((n + 1)) > "$0"' "$counter" || echo "lock run exit $?" >&2
    done
  ) &
done
wait
`

// TestLockRunScriptsAcrossBoards: agent scripts on two boards increment
// one counter under `pickup lock run` of one key: no increment is lost.
func TestLockRunScriptsAcrossBoards(t *testing.T) {
	_, url := newDatabase(t)
	cs := clones(t, url, 2)
	tmp := t.TempDir()
	script := filepath.Join(tmp, "agent.sh")
	counter := filepath.Join(tmp, "counter")
	if err := os.WriteFile(script, []byte(lockScript), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(counter, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const jobs, rounds = 3, 6
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for _, c := range cs {
		cmd := exec.CommandContext(ctx, script, c.dir, counter, strconv.Itoa(jobs), strconv.Itoa(rounds))
		cmd.Env = env(c.home)
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil || outs[i].Len() > 0 {
			t.Errorf("agent script of %s: %v\n%s", cs[i].name, err, outs[i])
		}
	}
	data, _ := os.ReadFile(counter)
	if got, want := strings.TrimSpace(string(data)), strconv.Itoa(len(cs)*jobs*rounds); got != want {
		t.Errorf("the counter is %s, want %s: critical sections overlapped across boards", got, want)
	}
}

// TestLockRunSupersedeAcrossHosts: a `pickup lock run --supersede` here
// stops an older `pickup lock run` of the same key on another host (which
// it cannot signal): the database marks it superseded, it stops its
// command at its next heartbeat as SIGTERM would, releases the lock, and
// the newer run runs its command after the older one's has ended.
func TestLockRunSupersedeAcrossHosts(t *testing.T) {
	_, url := newDatabase(t)
	cs := clones(t, url, 2)
	far, here := cs[0], cs[1]
	log := filepath.Join(t.TempDir(), "log")
	if os.Geteuid() != 0 {
		t.Skip("another host is simulated with unshare --uts, which needs root")
	}
	older := exec.Command("unshare", "--uts", "sh", "-c", `hostname far.invalid && exec "$0" "$@"`, filepath.Join(bin, "pickup"),
		"--dir", far.dir, "--owner", "old", "lock", "run", "job", "--ttl", "5s", "--", "bash", "-c",
		`trap 'echo older-stopped >> "$0"; exit 0' TERM; echo older-started >> "$0"; sleep 120 & wait`, log)
	older.Env = env(far.home)
	var olderOut strings.Builder
	older.Stdout, older.Stderr = &olderOut, &olderOut
	if err := older.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = older.Process.Kill(); _ = older.Wait() })
	read := func() string { data, _ := os.ReadFile(log); return string(data) }
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(read(), "older-started") {
		if time.Now().After(deadline) {
			t.Fatalf("the older run on the far host did not start its command\n%s", olderOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res := here.pickup(context.Background(), "new", "lock", "run", "job", "--", "true"); res.code != 3 {
		t.Fatalf("lock run without --supersede while the far run holds the key: exit %d, want 3\n%s", res.code, res.stderr)
	}
	res := here.pickup(context.Background(), "new", "lock", "run", "job", "--supersede", "--", "bash", "-c", `echo newer >> "$0"`, log)
	if res.code != 0 {
		t.Fatalf("lock run --supersede here: exit %d\n%s", res.code, res.stderr)
	}
	if got, want := read(), "older-started\nolder-stopped\nnewer\n"; got != want {
		t.Errorf("the commands ran as %q, want %q", got, want)
	}
	done := make(chan error, 1)
	go func() { done <- older.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the superseded run on the far host did not exit\n%s", olderOut.String())
	}
	if !strings.Contains(olderOut.String(), "supersedes this one") {
		t.Errorf("the superseded run did not say why it stopped:\n%s", olderOut.String())
	}
}

// TestLockDatabaseFails: when the database refuses the lock (here its
// table is gone), lock acquire exits 8 naming the database, and the
// record it had published on this board is removed again: nothing is
// held anywhere.
func TestLockDatabaseFails(t *testing.T) {
	db, url := newDatabase(t)
	a := clones(t, url, 1)[0]
	server.psql(t, db, "ALTER TABLE pickup_locks RENAME TO pickup_locks_away")
	res := a.pickup(context.Background(), "ana", "lock", "acquire", "repo:main")
	if res.code != 8 || !strings.Contains(res.stderr, db) {
		t.Fatalf("lock acquire with the database failing: exit %d, want 8 naming the database\n%s", res.code, res.stderr)
	}
	entries, _ := os.ReadDir(filepath.Join(a.dir, ".pickup", "locks"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".lock") && !strings.HasPrefix(e.Name(), ".") {
			t.Errorf("the failed acquire left a lock record on the board: %s", e.Name())
		}
	}
	server.psql(t, db, "ALTER TABLE pickup_locks_away RENAME TO pickup_locks")
	a.must("bob", "lock", "acquire", "repo:main") // free here and there
}

// TestSixteenLockRacers: 16 processes on 4 boards acquire one free key at
// once, each for a live agent of its own: one gets it, 15 are told it is
// held (exit 3), and the database names the winner.
func TestSixteenLockRacers(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 4)
	for round := range 3 {
		key := fmt.Sprintf("race-%d", round)
		results := make([]result, 16)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range results {
			c := cs[i%len(cs)]
			agent := sleeper(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i] = c.pickup(context.Background(), fmt.Sprintf("racer-%d", i), "--pid", pidArg(agent), "lock", "acquire", key)
			}()
		}
		close(start)
		wg.Wait()
		winner := ""
		for i, res := range results {
			switch res.code {
			case 0:
				if winner != "" {
					t.Fatalf("round %d: two racers got %s: %s and racer-%d", round, key, winner, i)
				}
				winner = fmt.Sprintf("racer-%d", i)
			case 3:
			default:
				t.Errorf("round %d: racer-%d: exit %d\n%s", round, i, res.code, res.stderr)
			}
		}
		if got := server.psql(t, db, "SELECT owner FROM pickup_locks WHERE key = '"+key+"'"); winner == "" || got != winner {
			t.Errorf("round %d: the database has %s held by %q, the winner was %q", round, key, got, winner)
		}
	}
}

// TestLibraryLocksAcrossBoards: a Go program that uses only the public
// packages takes its named locks through claim.Client.Locks on a board of
// the database, and they exclude `pickup lock` on another board of it as
// the command's own do: held one way, held the other, and free on both
// once released.
func TestLibraryLocksAcrossBoards(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	libraryEnv(t, cs[0].home)
	ana := sleeper(t)
	cs[0].must("ana", "--pid", pidArg(ana), "lock", "acquire", "repo:main")

	c, err := libClient(cs[1].dir, "lib")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	locks := c.Locks()
	defer locks.Close()
	if _, err := locks.Lock(context.Background(), "repo:main"); !errors.Is(err, claim.ErrLockHeld) {
		t.Fatalf("the library's lock of a key that ana holds on the other board: %v, want ErrLockHeld", err)
	}
	cs[0].must("ana", "lock", "release", "repo:main")
	info, err := locks.Lock(context.Background(), "repo:main")
	if err != nil {
		t.Fatalf("the library's lock after ana's release: %v", err)
	}
	if got := server.psql(t, db, "SELECT owner FROM pickup_locks WHERE key = 'repo:main'"); got != info.Owner {
		t.Fatalf("the database has the lock held by %q, want the library's %q", got, info.Owner)
	}
	bob := sleeper(t)
	if res := cs[0].pickup(context.Background(), "bob", "--pid", pidArg(bob), "lock", "acquire", "repo:main"); res.code != 3 {
		t.Fatalf("bob's acquire while the library holds the key: exit %d, want 3\n%s", res.code, res.stderr)
	}
	if err := locks.Unlock("repo:main", info.Token); err != nil {
		t.Fatalf("the library's unlock: %v", err)
	}
	cs[0].must("bob", "--pid", pidArg(bob), "lock", "acquire", "repo:main")
}
