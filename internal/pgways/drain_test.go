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
      if [ $rc = 8 ]; then echo next >> "$logs/exit8-$owner"; sleep 0.2; continue; fi
      [ $rc = 3 ] && break
      id=$(printf '%s' "$out" | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')
      if [ $rc != 0 ] || [ -z "$id" ]; then echo "next exit $rc" >> "$logs/errors"; break; fi
      echo "$id" >> "$logs/claims-$owner"
      while :; do
        pickup --dir "$board" --owner "$owner" done "$id" > /dev/null 2>>"$logs/stderr-$owner"
        rc=$?
        [ $rc = 0 ] && break
        if [ $rc = 8 ]; then echo done >> "$logs/exit8-$owner"; sleep 0.2; continue; fi
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
}

// startAgents starts one agent script with jobs subshells in each clone.
func startAgents(t *testing.T, ctx context.Context, cs []*clone, jobs int) *drain {
	tmp := t.TempDir()
	script := filepath.Join(tmp, "agent.sh")
	if err := os.WriteFile(script, []byte(agentScript), 0o755); err != nil {
		t.Fatal(err)
	}
	d := &drain{t: t, logs: filepath.Join(tmp, "logs")}
	if err := os.MkdirAll(d.logs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		cmd := exec.CommandContext(ctx, script, c.dir, d.logs, c.name, strconv.Itoa(jobs))
		cmd.Env = env(c.home)
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
			t.Errorf("agent script %d: %v\n%s", i, err, d.outs[i])
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

// exit8 returns how many commands the agents ran again after exit 8, and
// what pickup said then.
func (d *drain) exit8() (int, string) {
	n := 0
	files, _ := filepath.Glob(filepath.Join(d.logs, "exit8-*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		n += len(strings.Fields(string(data)))
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
// drain 400 sessions made from all 4: each is claimed and finished
// exactly once, nothing is lost, every board agrees.
func TestDrainFourByFour(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 4)
	ids := createFromAll(t, cs, 400)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
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

// waitDone waits until at least n sessions are done.
func waitDone(t *testing.T, db string, n int) {
	deadline := time.Now().Add(3 * time.Minute)
	for doneCount(t, db) < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d sessions done after 3 minutes", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServerFailuresMidDrain: while 4 boards × 2 agents drain, the
// server is stopped the way a crash stops it (pg_ctl stop -m immediate)
// and started again, then every backend of the board is terminated
// (pg_terminate_backend), twice. The agents see exit 8 naming the
// database, run the command again, and the drain finishes: each session
// claimed and finished exactly once, nothing lost, every board agrees.
func TestServerFailuresMidDrain(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 4)
	ids := createFromAll(t, cs, 120)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	d := startAgents(t, ctx, cs, 2)
	waitDone(t, db, 30)
	if err := server.Stop("immediate"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	waitDone(t, db, 60)
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
	if n8 == 0 {
		t.Errorf("no command exited 8 while the server was down")
	}
	if !strings.Contains(said, "database postgres://pickup@127.0.0.1") {
		t.Errorf("no error named the database; pickup said:\n%s", said)
	}
	checkDrained(t, db, cs, ids, claims)
}
