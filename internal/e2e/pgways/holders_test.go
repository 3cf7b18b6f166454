package pgways

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestKilledAgentOfAnotherClone: 4 clones of one machine share the
// database. An agent with --pid claims in clone 1; the other clones know
// its lease's processes through the database, so clone 4 judges it by
// them: alive while it runs (its next takes nothing, status says "this
// machine"), and once it is SIGKILLed, clone 4's next reaps it and gets
// its session at once.
func TestKilledAgentOfAnotherClone(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 4)
	first, last := cs[0], cs[3]
	id := strings.TrimSpace(first.must("", "new", "-t", "killed in clone 1"))
	agent := exec.Command("sleep", "300")
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	first.must("victim", "--pid", strconv.Itoa(agent.Process.Pid), "claim", id)

	// Alive: clone 4 takes nothing, and says where the owner works.
	if res := last.pickup(context.Background(), "heir", "next", "--json"); res.code != 3 {
		t.Fatalf("clone 4's next while the agent of clone 1 runs: exit %d, want 3 (nothing available)\n%s%s", res.code, res.stdout, res.stderr)
	}
	host, _ := os.Hostname()
	text := last.must("", "status")
	if !strings.Contains(text, "victim: alive (pid "+strconv.Itoa(agent.Process.Pid)) || !strings.Contains(text, "on this machine ("+host+")") ||
		strings.Contains(text, "another machine") {
		t.Errorf("status in clone 4 while victim runs in clone 1: want it alive by its pid, on this machine (%s); got\n%s", host, text)
	}
	var owners []struct {
		Owner       string `json:"owner"`
		State       string `json:"state"`
		Elsewhere   bool   `json:"elsewhere"`
		ThisMachine bool   `json:"this_machine"`
	}
	out := last.must("", "status", "--json")
	_ = json.Unmarshal([]byte(out), &owners)
	seen := false
	for _, o := range owners {
		if o.Owner == "victim" {
			seen = o.State == "alive" && !o.Elsewhere && o.ThisMachine
		}
	}
	if !seen {
		t.Errorf("status --json in clone 4: want victim alive on this machine, got\n%s", out)
	}

	if err := agent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = agent.Wait()
	res := last.pickup(context.Background(), "heir", "next", "--json")
	if res.code != 0 || !strings.Contains(res.stdout, id) {
		t.Fatalf("clone 4's next after the agent of clone 1 was killed: exit %d, want %s\nstatus in clone 4:\n%s\n%s%s",
			res.code, id, last.must("", "status"), res.stdout, res.stderr)
	}
	if got := server.psql(t, db, "SELECT string_agg(op || ':' || dst, ',' ORDER BY seq) FROM pickup_events WHERE id = '"+id+"'"); got != "new:todo,claim:doing/victim,reap:todo,next:doing/heir" {
		t.Errorf("the database's history of %s: %s", id, got)
	}
	first.must("", "sync")
	if got := first.files("doing/heir"); len(got) != 1 || got[0] != id {
		t.Errorf("clone 1 shows doing/heir %v, want %s", got, id)
	}
	if res := first.pickup(context.Background(), "victim", "done", id); res.code != 6 {
		t.Errorf("the killed owner's late done in clone 1: exit %d, want 6\n%s", res.code, res.stderr)
	}
}
