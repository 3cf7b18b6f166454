package claudee2e

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var claimedLine = regexp.MustCompile(`claimed (\S+) \[`)

// TestWorkPool: `pickup work -j 2 -- claude -p /pickup` over 6 sessions is
// the way to run a pool of headless agents. Each Claude Code process
// follows the /pickup skill (pickup next, work, and in one variant pickup
// done itself): next answers with the session work gave it, so each
// session is worked by exactly one conversation (the stand-in's log is the
// proof), all 6 end in done/, and work exits 0 counting 6 done.
func TestWorkPool(t *testing.T) {
	forEachSetup(t, func(t *testing.T, p *project) {
		for _, finishes := range []bool{false, true} {
			name := "work-marks-done"
			if finishes {
				name = "agent-finishes"
			}
			t.Run(name, func(t *testing.T) {
				p := p.in(t)
				ids := p.seed("one", "two", "three", "four", "five", "six")
				var mu sync.Mutex
				worked := map[string][]string{} // session -> conversations that were told they hold it
				api := newMultiAPI(t, "pool", func(conv string) []step {
					var id string
					return []step{
						{Bash: "pickup next"},
						{Then: func(prev toolResult) step {
							m := claimedLine.FindStringSubmatch(prev.Content)
							if prev.ExitCode() != 0 || m == nil {
								return step{Text: "The claim failed; stopping."}
							}
							id = m[1]
							mu.Lock()
							worked[id] = append(worked[id], conv)
							mu.Unlock()
							return step{Bash: "pickup show " + id}
						}},
						{Then: func(toolResult) step {
							if finishes && id != "" {
								return step{Bash: "pickup done " + id}
							}
							return step{Text: "Worked on " + id + "."}
						}},
						{Then: func(toolResult) step { return step{Text: "Finished " + id + "."} }},
					}
				})
				args := append([]string{"work", "-j", "2", "--", claudeBinary(t), "-p"}, p.claudeArgs...)
				args = append(args, p.pickupSkill)
				cmd := exec.Command(pickupBinary(t), args...)
				cmd.Dir = p.root
				cmd.Env = append(append([]string(nil), p.env...), claudeEnv(p, api.URL())...)
				timer := time.AfterFunc(5*time.Minute, func() { _ = cmd.Process.Signal(os.Interrupt) })
				out, err := cmd.CombinedOutput()
				timer.Stop()
				if err != nil {
					t.Fatalf("pickup work: %v\n%s", err, out)
				}
				if !strings.Contains(string(out), "6 claimed, 6 done, 0 failed runs, 0 set aside, 0 released, 0 lost") {
					t.Fatalf("pickup work did not count 6 done:\n%s", out)
				}
				convs := api.Conversations()
				if len(convs) != 6 {
					t.Fatalf("%d conversations asked the stand-in, want 6 (one per session): %v\n%s", len(convs), sortedKeys(convs), out)
				}
				for _, id := range ids {
					p.requireState(id, "done", "after pickup work")
					if got := worked[id]; len(got) != 1 {
						t.Fatalf("session %s was worked by %d conversations %v, want exactly 1\n%s", id, len(got), got, out)
					}
					// SessionStart named the session the agent was given.
					conv := convs[worked[id][0]]
					if texts := conv.Texts(); len(texts) == 0 || !strings.Contains(texts[0], "pickup work started this Claude Code session") || !mentions(texts[0], id) {
						t.Fatalf("the context of the conversation that worked %s does not name it as the session work gave", id)
					}
				}
				for conv, a := range convs {
					if r := a.Results(); len(r) == 0 || !strings.Contains(r[0].Content, "no second claim") {
						t.Fatalf("pickup next in conversation %s did not say it answered with the session work gave: %v", conv, r)
					}
				}
				api.requireScriptFollowed(t)
			})
		}
	})
}

// claudeEnv is what startClaude adds to a project's environment for the
// CLI: its configuration, and the stand-in API.
func claudeEnv(p *project, url string) []string {
	return []string{
		"CLAUDE_CONFIG_DIR=" + p.home + "/.claude",
		"ANTHROPIC_BASE_URL=" + url,
		"ANTHROPIC_API_KEY=sk-ant-e2e-not-a-real-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	}
}
