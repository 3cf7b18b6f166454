package sharedways

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/internal/testbound"
)

// agentScript is an agent as a shell script: subshell loops, each
// claiming with $(pickup next --json | sed …) and finishing with done,
// in the background, then wait. $1 is the clone, $2 the log directory.
const agentScript = `#!/bin/bash
cd "$1" || exit 2
for n in 1 2; do
  (
    owner="$(basename "$1")-w$n"
    while id=$(pickup --owner "$owner" next --json | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p'); [ -n "$id" ]; do
      echo "$id" >> "$2/$owner"
      pickup --owner "$owner" done "$id" > /dev/null || echo "done $id failed" >> "$2/errors"
    done
  ) &
done
wait
`

// TestShellScriptAgents: two clones, each drained by an executable bash
// script whose subshells claim through command substitutions, the way an
// agent's script runs pickup: every session is claimed exactly once
// across the clones, and all of them end in done/ on the remote.
func TestShellScriptAgents(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	ids := createFromAll(t, cs, 10)
	tmp, script, bin := agentFiles(t, agentScript, pickupBinary(t))
	logs := filepath.Join(tmp, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	// Bounded from the scripts' last claim, not from their start.
	bound := testbound.New(t, 0)
	bound.Observe(func() string { return movedLines(logs, "errors") })
	ctx := bound.Context()
	var cmds []*exec.Cmd
	for _, c := range cs {
		cmd := exec.CommandContext(ctx, script, c.dir, logs)
		cmd.Env = append(baseEnv(r.home), "PATH="+bin+":"+os.Getenv("PATH"))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("%s's script said:\n%s", c.name, out.String())
			}
		})
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("agent script: %v (%v)", err, bound.Err())
		}
	}
	if data, err := os.ReadFile(filepath.Join(logs, "errors")); err == nil {
		t.Errorf("a done failed:\n%s", data)
	}
	claimedBy := map[string][]string{}
	entries, _ := os.ReadDir(logs)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(logs, e.Name()))
		for _, id := range strings.Fields(string(data)) {
			claimedBy[id] = append(claimedBy[id], e.Name())
		}
	}
	for _, id := range ids {
		if len(claimedBy[id]) != 1 {
			t.Errorf("%s claimed by %v, want exactly one agent", id, claimedBy[id])
		}
	}
	if len(claimedBy) != len(ids) {
		var got []string
		for id := range claimedBy {
			got = append(got, id)
		}
		sort.Strings(got)
		t.Errorf("the scripts claimed %d sessions, want %d: %v", len(claimedBy), len(ids), got)
	}
	done := 0
	for _, f := range r.branchFiles() {
		if strings.HasPrefix(f, "done/") {
			done++
		}
	}
	if done != len(ids) {
		t.Errorf("the remote has %d sessions in done/, want %d (%s)", done, len(ids), fmt.Sprint(r.branchFiles()))
	}
}
