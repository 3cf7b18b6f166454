package agentse2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/pickup-dev/pickup/internal/claude"
)

var kinds = []string{"codex", "gemini"}

// skillThenWork is the script of a model that follows the pickup skill:
// it reads the skill the agent listed, claims with `pickup next`, and
// finishes with `pickup done ID`.
func skillThenWork(skill string) []step {
	return []step{
		{Shell: "cat " + skill},
		{Then: func(prev string) step {
			if !strings.Contains(prev, "pickup next") {
				return step{Text: "The skill does not say how to claim; stopping."}
			}
			return step{Shell: "pickup next"}
		}},
		{Then: func(prev string) step {
			id := claimedID(prev)
			if id == "" {
				return step{Text: "Nothing claimed; stopping."}
			}
			return step{Shell: "pickup done " + id}
		}},
		{Text: "Done: the session is finished."},
	}
}

// TestSkillClaimsAndFinishes: with the setup of `pickup init --codex` or
// `--gemini`, the agent's SessionStart hook tells it which owner it is
// (its own session id), the agent lists the /pickup skill from
// .agents/skills/, and the commands the skill says claim the session as
// that owner (its file under doing/<owner>/) and finish it.
func TestSkillClaimsAndFinishes(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			p := newProject(t, kind)
			p.noRelaunch = true
			id := p.newSession("write the docs")
			skill := filepath.Join(p.root, ".agents", "skills", "pickup", "SKILL.md")
			api := newStandIn(t, kind, skillThenWork(skill)...)
			a := p.start("one", api, "Use the pickup skill to take work from the board.")
			a.wait()
			owner := a.owner()
			// The agent lists the skill to its model (Codex CLI by a
			// root and a short path, Gemini CLI by its whole path).
			if first := api.Bodies()[0]; !strings.Contains(first, filepath.Dir(filepath.Dir(skill))) || !strings.Contains(first, "pickup/SKILL.md") {
				i := strings.Index(first, "skills")
				t.Errorf("the agent did not list the skill %s to its model: %.2000s", skill, first[max(i, 0):])
			}
			outs := api.Outputs()
			if len(outs) < 3 {
				t.Fatalf("the agent sent %d tool outputs, want 3: %q", len(outs), outs)
			}
			if want := filepath.Join(p.board(), "doing", owner, id+".md"); !strings.Contains(outs[1], "claimed "+id) || !strings.Contains(outs[1], want) {
				t.Errorf("pickup next in the agent printed %q, want a claim of %s in %s", outs[1], id, want)
			}
			if !strings.Contains(outs[2], "done "+id) {
				t.Errorf("pickup done in the agent printed %q", outs[2])
			}
			if _, err := os.Stat(filepath.Join(p.board(), "done", id+".md")); err != nil {
				t.Errorf("the session is not in done/: %v", err)
			}
			// SessionEnd ended the lease: the owner holds nothing and
			// has no lease left.
			if out := p.pickup("list", "--state", "doing"); strings.Contains(out, id) {
				t.Errorf("the session is still in doing/:\n%s", out)
			}
		})
	}
}

// TestTwoAgentsNeverShare: two agents started together, each told to
// take one session, claim two different sessions, each as its own owner.
func TestTwoAgentsNeverShare(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			p := newProject(t, kind)
			ids := map[string]bool{p.newSession("first"): true, p.newSession("second"): true}
			var agents []*agent
			for _, name := range []string{"a", "b"} {
				api := newStandIn(t, kind,
					step{Shell: "pickup next"},
					step{Then: func(prev string) step {
						if id := claimedID(prev); id != "" {
							return step{Shell: "pickup done " + id}
						}
						return step{Text: "Nothing claimed; stopping."}
					}},
					step{Text: "Finished."})
				agents = append(agents, p.start(name, api, "Take one session and finish it."))
			}
			claimed := map[string]string{} // id -> owner
			for _, a := range agents {
				a.wait()
				outs := a.api.Outputs()
				if len(outs) < 1 {
					t.Fatalf("agent %s sent no tool output", a.name)
				}
				id := claimedID(outs[0])
				if id == "" || !ids[id] {
					t.Fatalf("agent %s claimed %q: %q", a.name, id, outs[0])
				}
				if other, ok := claimed[id]; ok {
					t.Fatalf("session %s was claimed by both %s and %s", id, other, a.owner())
				}
				claimed[id] = a.owner()
			}
			if agents[0].owner() == agents[1].owner() {
				t.Errorf("both agents are owner %s", agents[0].owner())
			}
			for id := range ids {
				if _, err := os.Stat(filepath.Join(p.board(), "done", id+".md")); err != nil {
					t.Errorf("session %s is not done: %v", id, err)
				}
			}
		})
	}
}

// TestKilledAgentGivesBack: an agent killed with SIGKILL while it holds a
// session (its model still thinking) gives it back at once: the next
// `pickup next` of anyone else gets it, with no reap and no wait.
func TestKilledAgentGivesBack(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			p := newProject(t, kind)
			id := p.newSession("long work")
			api := newStandIn(t, kind, step{Shell: "pickup next"}, step{Hold: true})
			a := p.start("doomed", api, "Take one session.")
			a.until("the model's second turn", api.held)
			owner := a.owner()
			if _, err := os.Stat(filepath.Join(p.board(), "doing", owner, id+".md")); err != nil {
				t.Fatalf("the agent does not hold the session: %v", err)
			}
			// While the agent lives, its claim is not taken.
			if out, code := p.pickupCode("next", "--owner", "rival"); code != 3 {
				t.Fatalf("pickup next of another owner while the agent lives: exit %d, want 3 (nothing available):\n%s", code, out)
			}
			// The process the lease follows: the one pickup's
			// SessionStart hook recorded for the session.
			rec, err := os.ReadFile(claude.SessionPath(p.board(), owner))
			if err != nil {
				t.Fatal(err)
			}
			var r claude.Record
			if err := json.Unmarshal(rec, &r); err != nil {
				t.Fatal(err)
			}
			if r.Process.PID <= 0 {
				t.Fatalf("no process in %s", rec)
			}
			if err := syscall.Kill(r.Process.PID, syscall.SIGKILL); err != nil {
				t.Fatalf("kill the agent (pid %d): %v", r.Process.PID, err)
			}
			// Its other processes go as a user's terminal would take
			// them; what matters is that the one the lease follows died.
			_ = syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
			<-a.exited
			out, code := p.pickupCode("next", "--owner", "rival")
			if code != 0 || !strings.Contains(out, "claimed "+id) {
				t.Fatalf("pickup next after the agent was killed: exit %d, want a claim of %s:\n%s", code, id, out)
			}
		})
	}
}

// TestBoardFilesGuarded: the agent's PreToolUse (BeforeTool) hook refuses
// a write of a board file, and nothing on the board moves.
func TestBoardFilesGuarded(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			p := newProject(t, kind)
			p.noRelaunch = true
			id := p.newSession("keep me")
			target := filepath.Join(".spx", "sessions", "todo", id+".md")
			// Each agent's own way to write a file.
			first := step{Call: "write_file", Args: map[string]any{"file_path": target, "content": "status: done\n"}}
			if kind == "codex" {
				first = step{Shell: "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: " + target + "\n*** End Patch\nEOF\n"}
			}
			api := newStandIn(t, kind, first, step{Text: "Stopping."})
			before, _ := os.ReadFile(filepath.Join(p.root, target))
			a := p.start("vandal", api, "Mark the session done by editing its file.")
			a.wait()
			after, err := os.ReadFile(filepath.Join(p.root, target))
			if err != nil || string(after) != string(before) {
				t.Fatalf("the board file changed (err %v):\n%s", err, after)
			}
			outs := api.Outputs()
			if len(outs) < 1 || !strings.Contains(outs[0], "refused") {
				t.Fatalf("the agent's model was not told the write was refused: %q", outs)
			}
		})
	}
}

// TestAutoNextAtStop: with auto_next: true, an agent that stops holding
// nothing is fed the next session by its Stop (AfterAgent) hook, claimed
// for it as its own owner; it works it, and stops when nothing is left.
func TestAutoNextAtStop(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			p := newProject(t, kind)
			p.noRelaunch = true
			id := p.newSession("fed by the hook")
			cfg := filepath.Join(p.board(), "config.yaml")
			old, _ := os.ReadFile(cfg)
			p.write(cfg, string(old)+"auto_next: true\n")
			fed := regexp.MustCompile(`pickup \(auto_next\): .*?it is yours now: (\S+) `)
			api := newStandIn(t, kind,
				step{Text: "Hello; waiting for work."},
				step{Body: func(body string) step {
					m := fed.FindStringSubmatch(body)
					if m == nil {
						return step{Text: "Nothing was given; stopping."}
					}
					return step{Shell: "pickup done " + m[1]}
				}},
				step{Text: "Finished it."})
			a := p.start("fed", api, "Say hello.")
			a.wait()
			outs := api.Outputs()
			if len(outs) < 1 || !strings.Contains(outs[len(outs)-1], "done "+id) && !slices.ContainsFunc(outs, func(o string) bool { return strings.Contains(o, "done "+id) }) {
				t.Fatalf("the agent did not finish the session its Stop hook gave it: %q", outs)
			}
			if _, err := os.Stat(filepath.Join(p.board(), "done", id+".md")); err != nil {
				t.Fatalf("the session is not done: %v", err)
			}
			// It was claimed as the agent's own owner, not a terminal's.
			log, _ := os.ReadFile(filepath.Join(p.board(), "events.log"))
			if !strings.Contains(string(log), a.owner()) {
				t.Errorf("events.log does not name the agent's owner %s:\n%s", a.owner(), log)
			}
		})
	}
}
