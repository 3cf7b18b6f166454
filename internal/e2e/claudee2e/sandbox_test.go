package claudee2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// sandboxSettings turn on Claude Code's Bash sandbox (bubblewrap, with
// socat for its network proxy) and make a missing dependency an error
// instead of a silent run outside the sandbox.
const sandboxSettings = `{"sandbox":{"enabled":true,"failIfUnavailable":true,"autoAllowBashIfSandboxed":true}}`

// TestSandbox: with the Bash sandbox on, the agent's pickup commands run in
// a pid namespace of their own. No false reap either way: the sandboxed
// agent's `next` does not take a live outside owner's claim, and outside
// agents' `next` and `reap` do not take the live sandboxed session's
// claims. Killed, the sandboxed session's claims come back at once.
func TestSandbox(t *testing.T) {
	forEachSetup(t, func(t *testing.T, p *project) {
		ids := p.seed("Fix the parser", "Held outside", "Write the docs", "Tidy the tests")
		outside := exec.Command("sleep", "600")
		if err := outside.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = outside.Process.Kill(); _ = outside.Wait() })
		if _, errOut, code := p.pickupEnv([]string{fmt.Sprintf("PICKUP_PID=%d", outside.Process.Pid)}, "outside", "claim", ids[1]); code != 0 {
			t.Fatalf("the outside owner's claim: exit %d\n%s", code, errOut)
		}
		ourNS, err := os.Readlink("/proc/self/ns/pid")
		if err != nil {
			t.Fatal(err)
		}

		api := newStubAPI(t, "sandboxed",
			step{Bash: "readlink /proc/self/ns/pid"},
			step{Bash: "pickup next"},
			claimed(step{Bash: "pickup next"}),
			claimed(stop))
		a := p.startClaude("sandboxed", api, claudeOpts{args: []string{"--settings", sandboxSettings}})
		a.prompt(p.pickupSkill)
		if ns := requireResult(t, api, 0, 0); strings.TrimSpace(ns.Content) == ourNS || !strings.HasPrefix(ns.Content, "pid:[") {
			t.Fatalf("the Bash tool ran in pid namespace %q, the test's is %q: want a sandbox of its own", ns.Content, ourNS)
		}
		t.Logf("the Bash tool ran in %s; the test runs in %s", strings.TrimSpace(api.Results()[0].Content), ourNS)
		requireResult(t, api, 1, 0, "claimed "+ids[0]+" [")
		requireResult(t, api, 2, 0, "claimed "+ids[2]+" [")
		p.requireHeld(ids[1], "outside", "after the sandboxed agent's next")
		p.requireHeld(ids[0], a.ID(), "after the sandboxed agent's claims")
		p.requireLeaseOn(a.ID(), a.Pid(), "after the sandboxed agent's claims")

		if out := p.pickupOK("other", "next"); !strings.Contains(out, "claimed "+ids[3]+" [") {
			t.Fatalf("an outside agent's next while the sandboxed session runs: %q, want %s", out, ids[3])
		}
		p.pickupOK("", "reap")
		p.requireHeld(ids[0], a.ID(), "after an outside next and reap")
		p.requireHeld(ids[2], a.ID(), "after an outside next and reap")
		if strings.Contains(p.events(), `"op":"reap"`) {
			t.Fatalf("a live owner was reaped:\n%s", p.events())
		}

		a.signal(syscall.SIGKILL)
		a.wait("SIGKILL")
		if out := p.pickupOK("other", "next"); !strings.Contains(out, "claimed "+ids[0]+" [") {
			t.Fatalf("an outside agent's next after the sandboxed session was killed: %q, want %s at once", out, ids[0])
		}
		p.requireHeld(ids[1], "outside", "at the end")
		requireScriptFollowed(t, api)
	})
}
