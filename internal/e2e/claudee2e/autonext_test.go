package claudee2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var fedLine = regexp.MustCompile(`it is yours now: (\S+) \[`)

// drainer is the script of an agent that works whatever it is given: it
// claims with pickup next at the first prompt, finishes each session it
// holds with pickup done and ends its turn; when pickup's Stop hook feeds
// it another session it works that one the same way. worked records, per
// session, the conversations that worked it.
func drainer(name string, mu *sync.Mutex, worked map[string][]string) []step {
	var current string
	agent := func(prev toolResult, since string) step {
		switch {
		case current == "" && strings.HasPrefix(prev.Tool, "Bash") && strings.Contains(prev.Content, "claimed "):
			if m := claimedLine.FindStringSubmatch(prev.Content); m != nil {
				current = m[1]
			}
		case current == "":
			if m := fedLine.FindStringSubmatch(since); m != nil {
				current = m[1]
			}
		}
		if current == "" {
			if prev.Tool == "" && strings.Contains(since, "Session asked for") {
				return step{Bash: "pickup next"}
			}
			return step{Text: "Nothing to work on; stopping."}
		}
		if cmd, _ := prev.Input["command"].(string); cmd == "pickup done "+current {
			id := current
			current = ""
			return step{Text: "Finished " + id + "."}
		}
		mu.Lock()
		worked[current] = append(worked[current], name)
		mu.Unlock()
		return step{Bash: "pickup done " + current}
	}
	steps := make([]step, 40)
	for i := range steps {
		steps[i] = step{Reply: agent}
	}
	return steps
}

// send writes one user message without waiting for the turn's result.
func (c *claude) send(text string) {
	c.t.Helper()
	msg, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
	if _, err := c.in.Write(append(msg, '\n')); err != nil {
		c.t.Fatalf("claude %s: write prompt: %v", c.name, err)
	}
}

// result waits for the result of the turn, however many stops a Stop hook
// turned into more work.
func (c *claude) result(within time.Duration) map[string]any {
	c.t.Helper()
	select {
	case r := <-c.results:
		return r
	case <-c.exited:
		c.t.Fatalf("claude %s exited during its turn: %v", c.name, c.err)
	case <-time.After(within):
		c.t.Fatalf("claude %s: no result after %v", c.name, within)
	}
	return nil
}

// TestAutoNextDrains: two interactive Claude Code sessions, each given
// one /pickup by a person, drain a board of 8 sessions of mixed priority
// with auto_next: true: the Stop hook feeds each the next session by
// priority whenever it stops holding none, each session is worked exactly
// once, the claims follow priority order, and both sessions stop when
// nothing is left. Without the setting each stops after its first.
func TestAutoNextDrains(t *testing.T) {
	forEachSetup(t, func(t *testing.T, p *project) {
		for _, on := range []bool{true, false} {
			name := "auto_next"
			if !on {
				name = "without"
			}
			t.Run(name, func(t *testing.T) {
				p := p.in(t)
				cfg := filepath.Join(p.board, "config.yaml")
				if on {
					if err := os.WriteFile(cfg, []byte("auto_next: true\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				} else {
					_ = os.Remove(cfg)
				}
				// Mixed priorities, in an order that is not next's.
				prios := []string{"low", "high", "medium", "low", "high", "medium", "low", "high"}
				var ids []string
				byPrio := map[string][]string{}
				for i, prio := range prios {
					id := strings.TrimSpace(p.pickupOK("", "new", "--priority", prio, "--title", "session "+string(rune('a'+i))))
					ids = append(ids, id)
					byPrio[prio] = append(byPrio[prio], id)
				}
				want := append(append(append([]string{}, byPrio["high"]...), byPrio["medium"]...), byPrio["low"]...)

				var mu sync.Mutex
				worked := map[string][]string{}
				apiA := newStubAPI(t, "a", drainer("a", &mu, worked)...)
				apiB := newStubAPI(t, "b", drainer("b", &mu, worked)...)
				a := p.startClaude("a", apiA, claudeOpts{})
				b := p.startClaude("b", apiB, claudeOpts{})
				a.send(p.pickupSkill)
				b.send(p.pickupSkill)
				a.result(4 * turnTimeout)
				b.result(4 * turnTimeout)

				var claims []string
				for _, line := range strings.Split(p.events(), "\n") {
					var ev struct{ ID, Op string }
					if json.Unmarshal([]byte(line), &ev) == nil && (ev.Op == "next" || ev.Op == "claim") && slices.Contains(ids, ev.ID) {
						claims = append(claims, ev.ID)
					}
				}
				if !on {
					if len(worked) != 2 || len(claims) != 2 {
						t.Fatalf("without auto_next: %d sessions worked (%v), %d claims, want 2: each session stops after its first", len(worked), worked, len(claims))
					}
					for _, id := range claims {
						p.requireState(id, "done", "without auto_next")
					}
					a.end()
					b.end()
					return
				}
				for _, id := range ids {
					p.requireState(id, "done", "after both sessions stopped")
					if got := worked[id]; len(got) != 1 {
						t.Fatalf("session %s was worked %d times (%v), want once", id, len(got), got)
					}
				}
				if strings.Join(claims, " ") != strings.Join(want, " ") {
					t.Fatalf("claims in the order\n  %v\nwant priority order\n  %v", claims, want)
				}
				var perConv = map[string]int{}
				for _, by := range worked {
					perConv[by[0]]++
				}
				t.Logf("sessions worked: a %d, b %d", perConv["a"], perConv["b"])
				requireScriptFollowed(t, apiA, apiB)
				a.end()
				b.end()
			})
		}
	})
}
