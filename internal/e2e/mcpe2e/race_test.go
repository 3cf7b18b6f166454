package mcpe2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pickup-dev/pickup/internal/testbound"
)

// TestMCPRacesCommand: an MCP agent (`pickup mcp` in clone A, driven by
// the SDK's client) and `pickup claim`/`pickup next` in clone B race for
// the same session, round after round. Each session is won exactly once:
// one of the two is told it won and the arbiter (the remote's board
// branch, the database) has it in the winner's hands; the loser gets the
// not-available answer (the tool's outcome lost or none and a text that
// says to take other work; the command's exit 3), and nothing moved for
// it. The winner then finishes it, once.
func TestMCPRacesCommand(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t, kind)
			watch := testbound.New(t, 0)
			ctx := watch.Context()
			a, b := w.clones[0], w.clones[1]
			cs := a.connect(ctx, "racer")
			mcpOwner := ""
			rounds := testbound.Scaled(t, 8, 4)
			mcpWins := 0
			for round := range rounds {
				id := w.clones[round%2].newSession(fmt.Sprintf("round %d", round))
				w.clones[(round+1)%2].must("", "sync")
				cliOwner := fmt.Sprintf("cli-%d", round)
				byNext := round%2 == 1
				var got answer
				var gotErr error
				var cli result
				var wg sync.WaitGroup
				start := make(chan struct{})
				wg.Add(2)
				go func() {
					defer wg.Done()
					<-start
					if byNext {
						got, gotErr = call(ctx, cs, "next", nil)
					} else {
						got, gotErr = call(ctx, cs, "claim", map[string]any{"id": id})
					}
				}()
				go func() {
					defer wg.Done()
					<-start
					if byNext {
						cli = b.pickup(ctx, cliOwner, "next")
					} else {
						cli = b.pickup(ctx, cliOwner, "claim", id)
					}
				}()
				close(start)
				wg.Wait()
				watch.Progress("round %d raced", round)
				if gotErr != nil {
					t.Fatalf("round %d: %v (%s)", round, gotErr, watch.Status())
				}
				if got.isError {
					t.Fatalf("round %d: the tool failed instead of winning or losing: %s", round, got)
				}
				if cli.code != 0 && cli.code != 3 {
					t.Fatalf("round %d: pickup exit %d, want 0 or 3\n%s", round, cli.code, cli.stderr)
				}
				mcpWon, cliWon := got.Outcome == "claimed", cli.code == 0
				if mcpWon == cliWon {
					t.Fatalf("round %d (next: %v): MCP agent won %v (%s), pickup won %v (%s%s): want exactly one winner",
						round, byNext, mcpWon, got, cliWon, cli.stdout, cli.stderr)
				}
				winner := cliOwner
				if mcpWon {
					if got.ID != id {
						t.Fatalf("round %d: the MCP agent claimed %s, want %s (the only session waiting)", round, got.ID, id)
					}
					if mcpOwner == "" {
						mcpOwner = got.Owner
					}
					if got.Owner != mcpOwner || !strings.HasPrefix(got.Owner, "racer-mcp-") {
						t.Fatalf("round %d: the MCP agent's owner is %q, want one racer-mcp-… for the connection (%q)", round, got.Owner, mcpOwner)
					}
					winner = mcpOwner
					// Nothing moved for the command that lost: clone B
					// has it in no doing/ but the winner's.
					b.must("", "sync")
					if who, ok := b.localDoing()[id]; ok && who != mcpOwner {
						t.Fatalf("round %d: clone B has %s in doing/%s after pickup lost it to %s", round, id, who, mcpOwner)
					}
				} else {
					// The loser's answer says so, and what to do.
					switch {
					case byNext && got.Outcome == "none" && strings.Contains(got.text, "call next again later"):
					case got.Outcome == "lost" && got.Owner == cliOwner && strings.Contains(got.text, "is not yours") && strings.Contains(got.text, "call next"):
					default:
						t.Fatalf("round %d (next: %v): the MCP agent lost, but its answer is %s", round, byNext, got)
					}
					// Nothing moved for it: clone A has it in no doing/ of
					// its own.
					a.must("", "sync")
					if who, ok := a.localDoing()[id]; ok && who != cliOwner {
						t.Fatalf("round %d: clone A has %s in doing/%s after the MCP agent lost it to %s", round, id, who, cliOwner)
					}
				}
				if where := w.where(id); where != "doing/"+winner {
					t.Fatalf("round %d: the arbiter has %s in %q, want doing/%s (the one told it won)", round, id, where, winner)
				}
				if mcpWon {
					mcpWins++
				}
				// The winner finishes it.
				if mcpWon {
					if done, err := call(ctx, cs, "done", map[string]any{"id": id}); err != nil || done.Outcome != "done" {
						t.Fatalf("round %d: done through MCP: %v %s", round, err, done)
					}
				} else {
					b.must(cliOwner, "done", id)
				}
				if where, n := w.where(id), w.dones(id); where != "done" || n != 1 {
					t.Fatalf("round %d: the arbiter has %s in %q with %d done events, want done once", round, id, where, n)
				}
				watch.Progress("round %d checked", round)
			}
			t.Logf("%d rounds: the MCP agent won %d, pickup %d", rounds, mcpWins, rounds-mcpWins)
		})
	}
}

// TestMCPAndCommandDrain: an MCP agent in clone A (next, done through
// `pickup mcp`) and a command-line agent in clone B (pickup next, pickup
// done) drain one board together: every session is finished exactly once,
// by the one agent told it won it, and the arbiter has each done once.
func TestMCPAndCommandDrain(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t, kind)
			watch := testbound.New(t, 0)
			ctx := watch.Context()
			a, b := w.clones[0], w.clones[1]
			n := testbound.Scaled(t, 16, 6)
			var ids []string
			for i := range n {
				ids = append(ids, w.clones[i%2].newSession(fmt.Sprintf("task %d", i)))
			}
			a.must("", "sync")
			b.must("", "sync")
			cs := a.connect(ctx, "drainer")
			var mu sync.Mutex
			won := map[string][]string{}
			note := func(owner, id string) {
				mu.Lock()
				won[id] = append(won[id], owner)
				mu.Unlock()
				watch.Progress("%s won %s", owner, id)
			}
			errs := make(chan error, 2)
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { // the MCP agent
				defer wg.Done()
				for turn := 0; ; turn++ {
					if turn > 2*n {
						errs <- fmt.Errorf("the MCP agent still claims after %d sessions of %d (sessions claimed twice?)", turn, n)
						return
					}
					got, err := call(ctx, cs, "next", nil)
					if err != nil {
						errs <- err
						return
					}
					if got.Outcome == "none" {
						return
					}
					if got.Outcome != "claimed" {
						errs <- fmt.Errorf("the MCP agent's next: %s", got)
						return
					}
					note(got.Owner, got.ID)
					if done, err := call(ctx, cs, "done", map[string]any{"id": got.ID}); err != nil || done.Outcome != "done" {
						errs <- fmt.Errorf("the MCP agent's done %s: %v %s", got.ID, err, done)
						return
					}
				}
			}()
			go func() { // the command-line agent
				defer wg.Done()
				for turn := 0; ; turn++ {
					if turn > 2*n {
						errs <- fmt.Errorf("the command-line agent still claims after %d sessions of %d (sessions claimed twice?)", turn, n)
						return
					}
					res := b.pickup(ctx, "cli", "next")
					if res.code == 3 {
						return
					}
					f := strings.Fields(res.stdout)
					if res.code != 0 || len(f) < 2 || f[0] != "claimed" {
						errs <- fmt.Errorf("pickup next: exit %d\n%s%s", res.code, res.stdout, res.stderr)
						return
					}
					note("cli", f[1])
					if res := b.pickup(ctx, "cli", "done", f[1]); res.code != 0 {
						errs <- fmt.Errorf("pickup done %s: exit %d\n%s", f[1], res.code, res.stderr)
						return
					}
				}
			}()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("%v (%s)", err, watch.Status())
			}
			byWho := map[string]int{}
			for _, id := range ids {
				if len(won[id]) != 1 {
					t.Errorf("session %s was won by %v, want exactly one agent", id, won[id])
				} else {
					byWho[won[id][0]]++
				}
				if where, n := w.where(id), w.dones(id); where != "done" || n != 1 {
					t.Errorf("the arbiter has %s in %q with %d done events, want done once", id, where, n)
				}
			}
			t.Logf("%d sessions finished: %v", n, byWho)
		})
	}
}
