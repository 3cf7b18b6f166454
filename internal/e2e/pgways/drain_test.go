package pgways

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbound"
)

// agentScript is an agent as a shell script: $4 subshells, each claiming
// with $(pickup next --json | sed …) and finishing with done, in the
// background, then wait. $1 is the board, $2 the log folder, $3 the
// clone's name. A database that fails (exit 8) is waited out and the
// command run again; exit 3 from next means nothing is left.
const agentScript = `#!/bin/bash
board=$1 logs=$2 name=$3 jobs=$4
for n in $(seq 1 "$jobs"); do
  (
    owner="$name-w$n"
    while :; do
      out=$(pickup --dir "$board" --owner "$owner" next --json 2>>"$logs/stderr-$owner")
      rc=$?
      if [ $rc = 8 ]; then echo "next $(date +%s%N)" >> "$logs/exit8-$owner"; sleep 0.2; continue; fi
      [ $rc = 3 ] && break
      id=$(printf '%s' "$out" | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')
      if [ $rc != 0 ] || [ -z "$id" ]; then echo "next exit $rc" >> "$logs/errors"; break; fi
      echo "$id" >> "$logs/claims-$owner"
      while :; do
        pickup --dir "$board" --owner "$owner" done "$id" > /dev/null 2>>"$logs/stderr-$owner"
        rc=$?
        [ $rc = 0 ] && break
        if [ $rc = 8 ]; then echo "done $(date +%s%N)" >> "$logs/exit8-$owner"; sleep 0.2; continue; fi
        echo "done $id exit $rc" >> "$logs/errors"
        break
      done
    done
  ) &
done
wait
`

// drain is one run of the agent scripts over clones.
type drain struct {
	t    *testing.T
	logs string
	cmds []*exec.Cmd
	outs []*strings.Builder
	// bound ends the scripts when no session was claimed for
	// testbound.Idle: a drain runs as slowly as the machine does, a hang
	// ends.
	bound *testbound.Watch
}

// startAgents starts one agent script with jobs subshells in each clone.
func startAgents(t *testing.T, ctx context.Context, cs []*clone, jobs int, extraEnv ...string) *drain {
	tmp := t.TempDir()
	script := filepath.Join(tmp, "agent.sh")
	if err := os.WriteFile(script, []byte(agentScript), 0o755); err != nil {
		t.Fatal(err)
	}
	d := &drain{t: t, logs: filepath.Join(tmp, "logs")}
	if err := os.MkdirAll(d.logs, 0o755); err != nil {
		t.Fatal(err)
	}
	d.bound = testbound.New(t, 0)
	d.bound.Observe(func() string { return claimsLogged(d.logs) })
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(d.bound.Context(), func() { cancel(context.Cause(d.bound.Context())) })
	t.Cleanup(func() { stop(); cancel(nil) })
	for _, c := range cs {
		cmd := exec.CommandContext(ctx, script, c.dir, d.logs, c.name, strconv.Itoa(jobs))
		cmd.Env = append(env(c.home), extraEnv...)
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		d.cmds = append(d.cmds, cmd)
		d.outs = append(d.outs, out)
	}
	return d
}

// wait waits for every script and returns each agent's claims.
func (d *drain) wait() map[string][]string {
	t := d.t
	for i, cmd := range d.cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("agent script %d: %v (%v)\n%s", i, err, d.bound.Err(), d.outs[i])
		}
	}
	if data, err := os.ReadFile(filepath.Join(d.logs, "errors")); err == nil {
		t.Errorf("the agents saw failures:\n%s", data)
	}
	claims := map[string][]string{}
	files, _ := filepath.Glob(filepath.Join(d.logs, "claims-*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		claims[strings.TrimPrefix(filepath.Base(f), "claims-")] = strings.Fields(string(data))
	}
	return claims
}

// claimsLogged says how many claims the agents logged so far.
func claimsLogged(logs string) string {
	n := 0
	files, _ := filepath.Glob(filepath.Join(logs, "claims-*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		n += strings.Count(string(data), "\n")
	}
	return fmt.Sprintf("%d claims", n)
}

// exit8 returns how many commands the agents ran again after exit 8, and
// what pickup said then. Each is a line "next|done UNIX-NANOSECONDS" of
// an exit8-* log (exit8Times).
func (d *drain) exit8() (int, string) {
	n := 0
	files, _ := filepath.Glob(filepath.Join(d.logs, "exit8-*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		n += strings.Count(string(data), "\n")
	}
	var said strings.Builder
	files, _ = filepath.Glob(filepath.Join(d.logs, "stderr-*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		said.Write(data)
	}
	return n, said.String()
}

// createFromAll makes n sessions, spread over the clones (made in
// parallel, one process per session, as agents and people make them).
func createFromAll(t *testing.T, cs []*clone, n int) []string {
	var mu sync.Mutex
	var ids []string
	var wg sync.WaitGroup
	for k, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := k; i < n; i += len(cs) {
				res := c.pickup(context.Background(), "", "new", "-t", fmt.Sprintf("session %d", i))
				if res.code != 0 {
					t.Errorf("%s: new: exit %d\n%s", c.name, res.code, res.stderr)
					return
				}
				mu.Lock()
				ids = append(ids, strings.TrimSpace(res.stdout))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(ids) != n {
		t.Fatalf("made %d sessions, want %d", len(ids), n)
	}
	return ids
}

// checkDrained asserts that every session was claimed by exactly one
// agent and finished exactly once, in the agents' own logs, in the
// database (its rows and its history) and on every board.
func checkDrained(t *testing.T, db string, cs []*clone, ids []string, claims map[string][]string) {
	t.Helper()
	byID := map[string][]string{}
	for owner, got := range claims {
		for _, id := range got {
			byID[id] = append(byID[id], owner)
		}
	}
	for _, id := range ids {
		if len(byID[id]) != 1 {
			t.Errorf("%s was claimed by %v in the agents' logs, want exactly one", id, byID[id])
		}
	}
	if len(byID) != len(ids) {
		t.Errorf("the agents claimed %d sessions, want %d", len(byID), len(ids))
	}
	if got := server.psql(t, db, "SELECT state, count(*) FROM pickup_sessions GROUP BY state"); got != fmt.Sprintf("done|%d", len(ids)) {
		t.Errorf("the database has %q, want all %d done", got, len(ids))
	}
	// Each session's history: made once, claimed once, done once.
	hist := server.psql(t, db, `SELECT id, string_agg(op, ',' ORDER BY seq) FROM pickup_events GROUP BY id`)
	bad := 0
	for _, line := range strings.Split(hist, "\n") {
		id, ops, _ := strings.Cut(line, "|")
		if ops != "new,next,done" {
			bad++
			if bad < 5 {
				t.Errorf("%s's history in the database is %s, want new,next,done", id, ops)
			}
		}
	}
	for _, c := range cs {
		c.must("", "sync")
		done := c.files("done")
		sort.Strings(done)
		if len(done) != len(ids) || len(c.files("todo")) != 0 {
			t.Errorf("%s shows %d sessions done and %d in todo, want %d and 0", c.name, len(done), len(c.files("todo")), len(ids))
		}
		owners, _ := os.ReadDir(filepath.Join(c.dir, "doing"))
		for _, o := range owners {
			if left := c.files("doing/" + o.Name()); len(left) != 0 {
				t.Errorf("%s shows %v still in doing/%s", c.name, left, o.Name())
			}
		}
	}
}

// TestDrainFourByFour: 4 boards × an agent script of 4 subshells each
// drain 100 sessions made from all 4: each is claimed and finished
// exactly once, nothing is lost, every board agrees. 16 agents contend
// for every claim from the first session to the last, so 100 make the
// race as real as 400 did, in a quarter of the processes;
// PICKUP_TEST_SCALE=4 runs the soak of 400.
func TestDrainFourByFour(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 4)
	ids := createFromAll(t, cs, testbound.Scaled(t, 100, 40))
	ctx := context.Background() // startAgents bounds the drain from its last claim
	start := time.Now()
	d := startAgents(t, ctx, cs, 4)
	claims := d.wait()
	t.Logf("4 × 4 drain of %d: %v", len(ids), time.Since(start).Round(time.Millisecond))
	checkDrained(t, db, cs, ids, claims)
}

// doneCount is how many sessions the database has in done.
func doneCount(t *testing.T, db string) int {
	out, err := server.psqlErr(db, "SELECT count(*) FROM pickup_sessions WHERE state = 'done'")
	if err != nil {
		return -1 // the server is down
	}
	n, _ := strconv.Atoi(strings.TrimSpace(out))
	return n
}

// waitDone waits until at least n sessions are done, for as long as
// sessions keep getting done (testbound.Idle without one is a hang).
func waitDone(t *testing.T, db string, n int) {
	t.Helper()
	bound := testbound.New(t, 0)
	bound.Observe(func() string { return fmt.Sprintf("%d done", doneCount(t, db)) })
	if !bound.Until(func() bool { return doneCount(t, db) >= n }) {
		t.Fatalf("fewer than %d sessions done (%d): %v", n, doneCount(t, db), bound.Err())
	}
}

// TestServerFailuresMidDrain: while 4 boards × 2 agents drain, the
// server is stopped the way a crash stops it (pg_ctl stop -m immediate)
// and started again, then every backend of the board is terminated
// (pg_terminate_backend), twice. The commands ride over it (the network
// deadline is the default 30 s): no agent sees exit 8, and the drain
// finishes: each session claimed and finished exactly once, nothing
// lost, every board agrees.
func TestServerFailuresMidDrain(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 4)
	// 80 sessions: a quarter done before the crash, half before the
	// backends are terminated, and half of them still to drain through
	// the terminations (120 did the same with more of each).
	ids := createFromAll(t, cs, 80)
	ctx := context.Background() // startAgents bounds the drain from its last claim
	d := startAgents(t, ctx, cs, 2)
	waitDone(t, db, 20)
	if err := server.Stop("immediate"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	waitDone(t, db, 40)
	killed := 0
	for range 2 {
		out := server.psql(t, "postgres", "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '"+db+"' AND pid <> pg_backend_pid()) k")
		n, _ := strconv.Atoi(out)
		killed += n
		time.Sleep(300 * time.Millisecond)
	}
	claims := d.wait()
	n8, said := d.exit8()
	t.Logf("%d backends terminated; the agents ran %d commands again after exit 8", killed, n8)
	if n8 != 0 {
		t.Errorf("%d commands exited 8 although the server was down for about a second; pickup said:\n%s", n8, said)
	}
	checkDrained(t, db, cs, ids, claims)
}

// exit8Times is when each exit 8 was answered, by the agents' logs.
func (d *drain) exit8Times() []time.Time {
	var out []time.Time
	files, _ := filepath.Glob(filepath.Join(d.logs, "exit8-*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			_, ns, _ := strings.Cut(line, " ")
			if n, err := strconv.ParseInt(ns, 10, 64); err == nil {
				out = append(out, time.Unix(0, n))
			}
		}
	}
	return out
}
