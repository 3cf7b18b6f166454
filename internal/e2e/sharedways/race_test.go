package sharedways

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestTwoClonesOneSession is the double claim of the issue: two clones of
// one remote, each claiming the same session. Exactly one wins; the other
// exits 3 naming the winner and keeps nothing.
func TestTwoClonesOneSession(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "file")
	cs := r.clones(2)
	id := cs[0].newSessions(1)[0]
	a := cs[0].pickup(context.Background(), "agent-a", "claim", id)
	b := cs[1].pickup(context.Background(), "agent-b", "claim", id)
	if a.code != 0 || b.code != 3 {
		t.Fatalf("claims of one session from two clones: exits %d and %d, want 0 and 3\nA: %s\nB: %s", a.code, b.code, a.stderr, b.stderr)
	}
	if !strings.Contains(b.stderr, "agent-a") {
		t.Fatalf("the loser's error does not name the winner agent-a:\n%s", b.stderr)
	}
	files, _ := cs[1].boardFiles()
	for _, f := range files {
		if strings.Contains(f, "agent-b") {
			t.Fatalf("the loser's clone still holds the session: %s", f)
		}
	}
	if got := r.branchFiles(); !contains(got, "doing/agent-a/"+id+".md") {
		t.Fatalf("the remote does not have %s in doing/agent-a: %v", id, got)
	}
	// The commits, trees and blobs that pickup wrote itself are sound.
	r.git(r.bare, "fsck", "--strict", "--no-dangling")
}

// TestSixteenRacers: 16 processes in 4 clones claim one session at once:
// one wins, 15 are told they lost, with exit 3.
func TestSixteenRacers(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"daemon", "file"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := newRemote(t, kind)
			cs := r.clones(4)
			id := cs[0].newSessions(1)[0]
			var wg sync.WaitGroup
			results := make([]result, 16)
			start := make(chan struct{})
			for i := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					results[i] = cs[i%4].pickup(context.Background(), fmt.Sprintf("r%02d", i), "claim", id)
				}()
			}
			close(start)
			wg.Wait()
			winners, losers := 0, 0
			winner := ""
			for i, res := range results {
				switch res.code {
				case 0:
					winners++
					winner = fmt.Sprintf("r%02d", i)
				case 3:
					losers++
				default:
					t.Errorf("racer r%02d: exit %d\n%s", i, res.code, res.stderr)
				}
			}
			if winners != 1 || losers != 15 {
				t.Fatalf("%d winners and %d losers (exit 3), want 1 and 15", winners, losers)
			}
			for i, res := range results {
				if res.code == 3 && !strings.Contains(res.stderr, winner) {
					t.Errorf("loser r%02d does not name the winner %s: %s", i, winner, res.stderr)
				}
			}
			if got := r.branchFiles(); !contains(got, "doing/"+winner+"/"+id+".md") {
				t.Fatalf("the remote does not have %s in doing/%s: %v", id, winner, got)
			}
			claims := countOps(r.branchEvents())[id]["claim"]
			if claims != 1 {
				t.Fatalf("the board's history has %d claims of %s, want 1", claims, id)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestIDsUniqueAcrossClones: two clones create sessions in the same
// seconds; every id is distinct and every session reaches the remote.
func TestIDsUniqueAcrossClones(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "file")
	cs := r.clones(2)
	ids := createFromAll(t, cs, 4)
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("two clones made the same id %s", id)
		}
		seen[id] = true
	}
	todo := 0
	for _, f := range r.branchFiles() {
		if strings.HasPrefix(f, "todo/") {
			todo++
		}
	}
	if todo != len(ids) {
		t.Fatalf("the remote has %d sessions in todo/, want %d", todo, len(ids))
	}
}
