package sharedways

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/testbound"
	"github.com/pickup-dev/pickup/sessions"
)

// libraryEnv gives this test process the environment of the children
// (baseEnv): the library's git commands run here, as in a Go program.
func libraryEnv(t *testing.T, r *remote) {
	for _, kv := range baseEnv(r.home) {
		k, v, _ := strings.Cut(kv, "=")
		if os.Getenv(k) != v {
			t.Setenv(k, v)
		}
	}
}

// TestLibraryRacesCommand: a Go program that uses only sessions and claim
// (sessions.Open, claim.New, Client.Claim or Queue.Next) races `pickup
// claim`/`pickup next` run in another clone of the same git remote, round
// after round. Each session is won once: exactly one of the two is told it
// won, the loser gets ErrSessionNotAvailable (or exit 3), and the remote
// has the session in the winner's hands. Rounds alternate Claim and
// Queue.Next, and the clone the session is made in: 8 rounds race each
// way four times (PICKUP_TEST_SCALE scales them, never below 8: with the
// board push made unconditional on purpose, a run of 4 rounds passed and
// one of 8 failed in round 6, another of 8 passed; only some rounds race
// for real, so fewer would prove less).
func TestLibraryRacesCommand(t *testing.T) {
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	libraryEnv(t, r)
	rounds := testbound.Scaled(t, 8, 8)
	for round := range rounds {
		id := cs[round%2].newSessions(1)[0]
		cs[(round+1)%2].must("", "sync")
		libOwner, cliOwner := fmt.Sprintf("lib-%d", round), fmt.Sprintf("cli-%d", round)
		byNext := round%2 == 1
		var libErr error
		var cli result
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			b, err := sessions.Open(cs[1].board())
			if err != nil {
				libErr = err
				return
			}
			c, err := claim.New(b, libOwner)
			if err != nil {
				libErr = err
				return
			}
			defer c.Close()
			<-start
			if byNext {
				var s sessions.Session
				s, libErr = c.NewQueue(claim.NextOptions{}).Next(context.Background())
				if libErr == nil && s.ID != id {
					libErr = fmt.Errorf("next took %s, want %s", s.ID, id)
				}
				if errors.Is(libErr, claim.ErrNothingAvailable) {
					libErr = claim.ErrSessionNotAvailable // lost: nothing left for it
				}
			} else {
				_, libErr = c.Claim(context.Background(), id)
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			if byNext {
				cli = cs[0].pickup(context.Background(), cliOwner, "next")
			} else {
				cli = cs[0].pickup(context.Background(), cliOwner, "claim", id)
			}
		}()
		close(start)
		wg.Wait()
		libWon, cliWon := libErr == nil, cli.code == 0
		if libErr != nil && !errors.Is(libErr, claim.ErrSessionNotAvailable) {
			t.Fatalf("round %d: the library's claim failed otherwise than losing: %v", round, libErr)
		}
		if cli.code != 0 && cli.code != 3 {
			t.Fatalf("round %d: pickup exit %d, want 0 or 3\n%s", round, cli.code, cli.stderr)
		}
		if libWon == cliWon {
			t.Fatalf("round %d (next: %v): library won %v, pickup won %v: want exactly one winner\npickup: %s", round, byNext, libWon, cliWon, cli.stderr)
		}
		winner := cliOwner
		if libWon {
			winner = libOwner
		}
		if got := r.branchFiles(); !contains(got, "doing/"+winner+"/"+id+".md") {
			t.Fatalf("round %d: the remote does not have %s in doing/%s: %v", round, id, winner, got)
		}
	}
}

// TestLibraryAndCommandsDrain: two library agents (goroutines of this
// process, one clone) and two command-line agents (pickup next / pickup
// done in a loop, the other clone) drain one board: every session is
// finished exactly once, by the one agent told it won it. 8 sessions for 4
// agents keep every next contended to the end (PICKUP_TEST_SCALE scales
// them; 16 was the size before the suite was shrunk).
func TestLibraryAndCommandsDrain(t *testing.T) {
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	libraryEnv(t, r)
	n := testbound.Scaled(t, 8, 8)
	ids := cs[0].newSessions(n)
	cs[1].must("", "sync")
	var mu sync.Mutex
	won := map[string][]string{}
	note := func(owner, id string) {
		mu.Lock()
		won[id] = append(won[id], owner)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 2 {
		owner := fmt.Sprintf("lib-%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := sessions.Open(cs[1].board())
			if err != nil {
				errs <- err
				return
			}
			c, err := claim.New(b, owner)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for turn := 0; ; turn++ {
				if turn > 2*n {
					errs <- fmt.Errorf("%s: still claiming after %d sessions of %d (sessions claimed twice?)", owner, turn, n)
					return
				}
				s, err := c.NewQueue(claim.NextOptions{}).Next(context.Background())
				if errors.Is(err, claim.ErrNothingAvailable) {
					return
				}
				if err != nil {
					errs <- fmt.Errorf("%s: next: %w", owner, err)
					return
				}
				note(owner, s.ID)
				if _, err := c.Done(context.Background(), s.ID); err != nil {
					errs <- fmt.Errorf("%s: done %s: %w", owner, s.ID, err)
					return
				}
			}
		}()
	}
	for i := range 2 {
		owner := fmt.Sprintf("cli-%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for turn := 0; ; turn++ {
				if turn > 2*n {
					errs <- fmt.Errorf("%s: still claiming after %d sessions of %d (sessions claimed twice?)", owner, turn, n)
					return
				}
				res := cs[0].pickup(context.Background(), owner, "next")
				if res.code == 3 {
					return
				}
				if res.code != 0 {
					errs <- fmt.Errorf("%s: pickup next: exit %d\n%s", owner, res.code, res.stderr)
					return
				}
				id := firstField(res.stdout)
				if id == "claimed" {
					id = strings.Fields(res.stdout)[1]
				}
				note(owner, id)
				if res := cs[0].pickup(context.Background(), owner, "done", id); res.code != 0 {
					errs <- fmt.Errorf("%s: pickup done %s: exit %d\n%s", owner, id, res.code, res.stderr)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	files := r.branchFiles()
	for _, id := range ids {
		if len(won[id]) != 1 {
			t.Errorf("session %s was won by %v, want exactly one agent", id, won[id])
		}
		if !contains(files, "done/"+id+".md") {
			t.Errorf("the remote does not have %s in done/", id)
		}
	}
	dones := map[string]int{}
	for _, e := range r.branchEvents() {
		if e.Op == "done" {
			dones[e.ID]++
		}
	}
	for _, id := range ids {
		if dones[id] != 1 {
			t.Errorf("the remote's event log has %d done of %s, want 1", dones[id], id)
		}
	}
}
