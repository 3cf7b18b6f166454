package claudee2e

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbin"
)

// requireResult fails unless the i-th tool result the CLI sent api exists,
// has exit code want, and holds every one of contains.
func requireResult(t *testing.T, api *stubAPI, i, want int, contains ...string) toolResult {
	t.Helper()
	results := api.Results()
	if i >= len(results) {
		t.Fatalf("the CLI sent %d tool results to %s, want at least %d: %v", len(results), api.name, i+1, results)
	}
	r := results[i]
	if got := r.ExitCode(); got != want {
		t.Fatalf("tool result %d of %s: exit code %d, want %d: %v", i, api.name, got, want, r)
	}
	for _, s := range contains {
		if !strings.Contains(r.Content, s) {
			t.Fatalf("tool result %d of %s lacks %q: %v", i, api.name, s, r)
		}
	}
	return r
}

func requireScriptFollowed(t *testing.T, apis ...*stubAPI) {
	t.Helper()
	for _, api := range apis {
		if errs := api.Errors(); len(errs) > 0 {
			t.Fatalf("the CLI did not follow the script of %s: %v", api.name, errs)
		}
	}
}

// claimed answers like the /pickup skill asks after a claim: go on when
// it succeeded, report and stop on any failure.
func claimed(then step) step {
	return step{Then: func(prev toolResult) step {
		if prev.ExitCode() != 0 {
			return step{Text: "The claim failed; stopping."}
		}
		return then
	}}
}

var stop = step{Text: "Stopping here."}

// TestPickupClaimsAsSession: /pickup makes the agent claim the best
// session with the Claude Code session id as owner, its lease on the Claude
// Code process; a second session told `/pickup ID` of that session gets
// exit 3, says who holds it and stops, and no board file changes.
func TestPickupClaimsAsSession(t *testing.T) {
	forEachSetup(t, func(t *testing.T, p *project) {
		ids := p.seed("Fix the parser", "Write the docs")
		apiA := newStubAPI(t, "a", step{Bash: "pickup next"}, claimed(stop))
		a := p.startClaude("a", apiA, claudeOpts{})
		a.prompt(p.pickupSkill)
		if !apiA.Saw("Session asked for: ``") {
			t.Fatalf("the /pickup skill did not reach the model with no session id")
		}
		requireResult(t, apiA, 0, 0, "claimed "+ids[0]+" [")
		p.requireHeld(ids[0], a.ID(), "after /pickup")
		p.requireLeaseOn(a.ID(), a.Pid(), "after /pickup")

		before := p.boardTree() + p.events()
		apiB := newStubAPI(t, "b", step{Bash: "pickup claim " + ids[0]}, step{Then: func(prev toolResult) step {
			if prev.ExitCode() == 3 {
				return step{Text: "Session " + ids[0] + " is held by another agent; stopping."}
			}
			return step{Bash: "pickup show " + ids[0]}
		}})
		b := p.startClaude("b", apiB, claudeOpts{})
		b.prompt(p.pickupSkill + " " + ids[0])
		if !apiB.Saw("Session asked for: `" + ids[0] + "`") {
			t.Fatalf("the /pickup skill did not reach the model with the session id %s", ids[0])
		}
		requireResult(t, apiB, 0, 3, a.ID())
		if n := len(apiB.Results()); n != 1 {
			t.Fatalf("the second session ran %d commands, want 1 (the failed claim): %v", n, apiB.Results())
		}
		b.end()
		if after := p.boardTree() + p.events(); after != before {
			t.Fatalf("the second session changed the board:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		p.requireHeld(ids[0], a.ID(), "after the second session ended")
		requireScriptFollowed(t, apiA, apiB)
	})
}

// TestSigtermReleases: SIGTERM to Claude Code runs SessionEnd, which gives
// back what the session held and ends its lease.
func TestSigtermReleases(t *testing.T) {
	forEachSetup(t, func(t *testing.T, p *project) {
		ids := p.seed("Fix the parser")
		api := newStubAPI(t, "a", step{Bash: "pickup next"}, claimed(stop))
		a := p.startClaude("a", api, claudeOpts{})
		a.prompt(p.pickupSkill)
		p.requireHeld(ids[0], a.ID(), "after /pickup")
		a.signal(syscall.SIGTERM)
		a.wait("SIGTERM")
		p.requireState(ids[0], "todo", "after SIGTERM")
		if s := p.status(a.ID()); s.State != "" {
			t.Fatalf("after SIGTERM the session's lease is still there: %+v", s)
		}
		if !strings.Contains(p.events(), `"op":"release","from":"doing/`+a.ID()+`"`) {
			t.Fatalf("events.log has no release by %s:\n%s", a.ID(), p.events())
		}
		requireScriptFollowed(t, api)
	})
}

// TestKillNineRecoverable: a Claude Code killed with SIGKILL runs no hook;
// its claims come back at the next `pickup next` of another agent, whose
// `done` succeeds, while the dead session's `done` is fenced with exit 6.
func TestKillNineRecoverable(t *testing.T) {
	forEachSetup(t, func(t *testing.T, p *project) {
		ids := p.seed("Fix the parser")
		api := newStubAPI(t, "a", step{Bash: "pickup next"}, claimed(stop))
		a := p.startClaude("a", api, claudeOpts{})
		a.prompt(p.pickupSkill)
		dead := a.ID()
		p.requireHeld(ids[0], dead, "after /pickup")
		a.signal(syscall.SIGKILL)
		a.wait("SIGKILL")
		p.requireHeld(ids[0], dead, "after SIGKILL, before anyone looked") // no hook ran

		out := p.pickupOK("other", "next")
		if !strings.Contains(out, "claimed "+ids[0]+" [") {
			t.Fatalf("another agent's next after the kill: %q, want it to claim %s at once", out, ids[0])
		}
		if _, errOut, code := p.pickup(dead, "done", ids[0]); code != 6 {
			t.Fatalf("the killed session's done: exit %d, want 6 (claim lost)\n%s", code, errOut)
		}
		p.pickupOK("other", "done", ids[0])
		p.requireState(ids[0], "done", "after the other agent's done")
		if _, errOut, code := p.pickup(dead, "done", ids[0]); code != 6 {
			t.Fatalf("the killed session's done after the session was finished: exit %d, want 6\n%s", code, errOut)
		}
		requireScriptFollowed(t, api)
	})
}

// TestSlowSessionEnd: a SessionEnd hook that takes longer than Claude
// Code's budget for it still gives the claims back and commits that in
// commit mode. The budget is 1.5 s by default; a project install gives the
// hook a timeout of its own, but Claude Code 2.1.331 ignores a plugin's
// SessionEnd timeout and cancels it at 1.5 s, so pickup's session-end does
// not stop when cancelled. The release is made slow where it really can
// be: git, which takes 3 s to commit here, as on a loaded machine or a
// slow disk.
func TestSlowSessionEnd(t *testing.T) {
	forEachSetup(t, func(t *testing.T, p *project) {
		realGit, err := exec.LookPath("git")
		if err != nil {
			t.Fatal(err)
		}
		cfg := filepath.Join(p.board, "config.yaml")
		old, err := os.ReadFile(cfg)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, append(old, "commit: true\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		p.run("git", "config", "user.email", "e2e@example.com")
		p.run("git", "config", "user.name", "e2e")
		ids := p.seed("Fix the parser")
		wrapperDir := t.TempDir()
		slow := filepath.Join(wrapperDir, "slow")
		wrapper := "#!/bin/sh\n" +
			"[ -e " + slow + " ] && for a in \"$@\"; do [ \"$a\" = commit ] && sleep 3 && break; done\n" +
			"exec " + realGit + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(wrapperDir, "git"), []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
		p.env = append(p.env, "PATH="+wrapperDir+string(os.PathListSeparator)+filepath.Dir(pickupBinary(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
		api := newStubAPI(t, "slow", step{Bash: "pickup next"}, claimed(stop))
		a := p.startClaude("slow", api, claudeOpts{})
		a.prompt(p.pickupSkill)
		p.requireHeld(ids[0], a.ID(), "after /pickup")
		before := p.run("git", "rev-list", "--count", "HEAD")
		if err := os.WriteFile(slow, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		a.signal(syscall.SIGTERM)
		a.wait("SIGTERM")
		// The release's commit lands about 3 s after the hook began,
		// whether or not Claude Code waited for it.
		deadline := time.Now().Add(20 * time.Second)
		for p.run("git", "rev-list", "--count", "HEAD") == before && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		testbin.WaitDetached(p.root) // the release process, before the folder goes
		p.requireState(ids[0], "todo", "after SIGTERM with a SessionEnd whose commit takes 3 s")
		if log := p.run("git", "log", "-1", "--format=%B"); !strings.Contains(log, "release "+ids[0]) {
			t.Fatalf("no commit of the release of %s 20 s after SIGTERM; the last commit:\n%s", ids[0], log)
		}
		requireScriptFollowed(t, api)
	})
}
