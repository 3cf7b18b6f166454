package pgways

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStatusShowsOwnersOfOtherMachines: pickup status on one board shows
// the owners that work on another board of the database with that
// machine's name and their heartbeat's age on the server's clock, as text
// and in --json. The other machine is a UTS namespace with its own
// hostname (root, on Linux); without one, both have this host's name.
func TestStatusShowsOwnersOfOtherMachines(t *testing.T) {
	_, url := newDatabase(t)
	cs := clones(t, url, 2)
	a, b := cs[0], cs[1]
	id := strings.TrimSpace(a.must("", "new", "-t", "for machine b"))

	hostB, _ := os.Hostname()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	claim := []string{filepath.Join(bin, "pickup"), "--dir", b.dir, "--owner", "bob", "claim", id}
	if exec.Command("unshare", "--uts", "true").Run() == nil {
		hostB = "machine-b"
		claim = append([]string{"unshare", "--uts", "sh", "-c", `hostname machine-b && exec "$@"`, "sh"}, claim...)
	} else {
		t.Log("no UTS namespace here (not root, or no unshare): both boards have this host's name")
	}
	cmd := exec.CommandContext(ctx, claim[0], claim[1:]...)
	cmd.Env = env(b.home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("claim on machine b: %v\n%s", err, out)
	}

	var owners []struct {
		Owner       string   `json:"owner"`
		Host        string   `json:"host"`
		Elsewhere   bool     `json:"elsewhere"`
		DBHeartbeat string   `json:"db_heartbeat_age"`
		Sessions    []string `json:"sessions"`
	}
	out := a.must("", "status", "--json")
	if err := json.Unmarshal([]byte(out), &owners); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if len(owners) != 1 || owners[0].Owner != "bob" || !owners[0].Elsewhere || owners[0].Host != hostB ||
		owners[0].DBHeartbeat == "" || len(owners[0].Sessions) != 1 || owners[0].Sessions[0] != id {
		t.Fatalf("status --json on board a: want bob elsewhere on %s holding %s with a database heartbeat age, got\n%s", hostB, id, out)
	}
	if age, err := time.ParseDuration(owners[0].DBHeartbeat); err != nil || age > 30*time.Second {
		t.Errorf("bob's heartbeat in the database: %q ago, want a few seconds", owners[0].DBHeartbeat)
	}
	text := a.must("", "status")
	if !strings.Contains(text, "on another machine: "+hostB+", last heartbeat in the database ") {
		t.Errorf("status on board a does not say bob works on %s:\n%s", hostB, text)
	}
	// On its own machine, bob is not elsewhere.
	if out := b.must("", "status", "--json"); strings.Contains(out, `"elsewhere"`) {
		t.Errorf("status on board b calls its own owner elsewhere:\n%s", out)
	}
}
