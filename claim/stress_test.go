package claim_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sync/errgroup"
)

// pkOwnBoard returns a Board value of its own for one claimer, as a separate
// process would have.
func pkOwnBoard(b *sessions.Board) *sessions.Board {
	return &sessions.Board{Dir: b.Dir, NoSync: true}
}

// TestStressDrain: 32 goroutines, each its own owner, drain the board with
// Next; every session is claimed exactly once and none is lost.
func TestStressDrain(t *testing.T) {
	tests := []struct {
		name     string
		sessions int
		queue    bool // a Queue with a 1 s snapshot, else Client.Next
		// warm lists todo/ before the start, so that every queue reads
		// its snapshot as a lineup from the listing cache at once, and
		// the claimers that run dry rewrite the stale cache together.
		warm bool
	}{
		{name: "queue with snapshot", sessions: 2000, queue: true},
		{name: "queue with snapshot, warm cache", sessions: 2000, queue: true, warm: true},
		{name: "plain next", sessions: 300},
	}
	const claimers = 32
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			ids := pkSeed(t, b, tt.sessions)
			if tt.warm {
				if _, err := b.ListState(sessions.Todo, false); err != nil {
					t.Fatal(err)
				}
			}
			wins := make([][]string, claimers)
			start := make(chan struct{})
			var g errgroup.Group
			for i := 0; i < claimers; i++ {
				g.Go(func() error {
					c, err := claim.New(pkOwnBoard(b), fmt.Sprintf("c%02d", i))
					if err != nil {
						return err
					}
					next := c.Next
					if tt.queue {
						next = c.NewQueue(claim.NextOptions{Snapshot: time.Second}).Next
					}
					<-start
					for {
						s, err := next(context.Background())
						if errors.Is(err, claim.ErrNothingAvailable) {
							return nil
						}
						if err != nil {
							return fmt.Errorf("%s: %w", c.Owner, err)
						}
						if s.Owner != c.Owner || s.State != sessions.Doing {
							return fmt.Errorf("%s: Next returned %s as %s/%s", c.Owner, s.ID, s.State, s.Owner)
						}
						wins[i] = append(wins[i], s.ID)
					}
				})
			}
			began := time.Now()
			close(start)
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d claimers drained %d sessions in %v", claimers, tt.sessions, time.Since(began).Round(time.Millisecond))
			byOwner := map[string][]string{}
			for i, w := range wins {
				byOwner[fmt.Sprintf("c%02d", i)] = w
			}
			pkCheckClaimedOnce(t, b, ids, byOwner)
		})
	}
}

// mixedWorker is one owner in TestStressMixed. It knows exactly what it
// holds and what it finished, because only it can move those sessions.
type mixedWorker struct {
	c        *claim.Client
	rng      *rand.Rand
	useNext  bool
	ids      []string
	held     map[string]bool
	finished map[string]bool // moved to done/ by this worker and not reopened
	notFound int             // see TestClaimRacingNeverSaysNotFound
}

// lost reports whether err is an acceptable answer to a transition on a
// session this worker does not hold: someone else has it, or it is in
// another state.
func (w *mixedWorker) lost(op, id string, err error) error {
	switch {
	case err == nil:
		return fmt.Errorf("%s: %s %s succeeded, but the worker did not hold it", w.c.Owner, op, id)
	case errors.Is(err, claim.ErrSessionNotFound):
		w.notFound++ // every session always exists: a racing Locate missed it
		return nil
	case errors.Is(err, claim.ErrSessionNotAvailable):
		return nil
	}
	return fmt.Errorf("%s: %s %s: %w", w.c.Owner, op, id, err)
}

func (w *mixedWorker) pickHeld() string {
	var list []string
	for id := range w.held {
		list = append(list, id)
	}
	sort.Strings(list)
	return list[w.rng.IntN(len(list))]
}

func (w *mixedWorker) step(ctx context.Context) error {
	id := w.ids[w.rng.IntN(len(w.ids))]
	switch op := w.rng.IntN(10); {
	case op < 3: // take something
		if w.useNext {
			s, err := w.c.Next(ctx)
			if errors.Is(err, claim.ErrNothingAvailable) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: next: %w", w.c.Owner, err)
			}
			if w.held[s.ID] || w.finished[s.ID] {
				return fmt.Errorf("%s: next returned %s, which it already had", w.c.Owner, s.ID)
			}
			w.held[s.ID] = true
			return nil
		}
		_, err := w.c.Claim(context.Background(), id)
		if w.held[id] {
			if err != nil {
				return fmt.Errorf("%s: claiming %s again: %w", w.c.Owner, id, err)
			}
			return nil
		}
		if err == nil {
			w.held[id] = true
			return nil
		}
		if errors.Is(err, claim.ErrSessionNotAvailable) || errors.Is(err, claim.ErrSessionNotFound) {
			return w.lost("claim", id, err)
		}
		return fmt.Errorf("%s: claim %s: %w", w.c.Owner, id, err)
	case op < 8: // give something back or finish it
		done := op >= 6
		do, name := w.c.Release, "release"
		if done {
			do, name = w.c.Done, "done"
		}
		if len(w.held) == 0 || w.rng.IntN(4) == 0 {
			if w.held[id] {
				return nil
			}
			_, err := do(context.Background(), id)
			if done && w.finished[id] {
				// Its own done is the session's last transition (only the
				// finisher reopens): done again stands.
				if err != nil {
					return fmt.Errorf("%s: done again of %s, which it finished: %w", w.c.Owner, id, err)
				}
				return nil
			}
			return w.lost(name, id, err)
		}
		id = w.pickHeld()
		if _, err := do(context.Background(), id); err != nil {
			return fmt.Errorf("%s: %s of its own %s: %w", w.c.Owner, name, id, err)
		}
		delete(w.held, id)
		if done {
			w.finished[id] = true
		}
		return nil
	default: // reopen something this worker finished
		if len(w.finished) == 0 {
			return nil
		}
		var list []string
		for id := range w.finished {
			list = append(list, id)
		}
		sort.Strings(list)
		id = list[w.rng.IntN(len(list))]
		if _, err := w.c.Reopen(context.Background(), id); err != nil {
			return fmt.Errorf("%s: reopen of %s, which it finished: %w", w.c.Owner, id, err)
		}
		delete(w.finished, id)
		return nil
	}
}

// TestStressMixed: owners claim, release, finish and reopen at random while
// others call Next. Because only an owner moves what it holds and only the
// finisher reopens, each worker's own books are exact, and at the end the
// board must match them: every session in exactly one place, doing/<owner>
// holding exactly what that owner holds, done/ what was finished.
func TestStressMixed(t *testing.T) {
	const (
		n       = 200
		workers = 16 // half claim by id, half call Next
		steps   = 200
	)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	b := pkBoard(t)
	ids := pkSeed(t, b, n)
	ws := make([]*mixedWorker, workers)
	for i := range ws {
		owner := fmt.Sprintf("id%02d", i)
		if i%2 == 1 {
			owner = fmt.Sprintf("nx%02d", i)
		}
		c, err := claim.New(pkOwnBoard(b), owner)
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = &mixedWorker{c: c, rng: rand.New(rand.NewPCG(seed, uint64(i))), useNext: i%2 == 1,
			ids: ids, held: map[string]bool{}, finished: map[string]bool{}}
	}
	var g errgroup.Group
	start := make(chan struct{})
	for _, w := range ws {
		g.Go(func() error {
			<-start
			for s := 0; s < steps; s++ {
				if err := w.step(context.Background()); err != nil {
					return fmt.Errorf("step %d: %w", s, err)
				}
			}
			return nil
		})
	}
	close(start)
	if err := g.Wait(); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}

	want := map[string]string{}
	for _, id := range ids {
		want[id] = "todo"
	}
	notFound := 0
	for _, w := range ws {
		notFound += w.notFound
		for id := range w.held {
			want[id] = "doing/" + w.c.Owner
		}
		for id := range w.finished {
			want[id] = "done"
		}
	}
	if notFound > 0 {
		t.Logf("%d transitions on existing sessions said ErrSessionNotFound (TestClaimRacingNeverSaysNotFound)", notFound)
	}
	got, err := pkWalk(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Errorf("the board holds %d names, want %d", len(got), n)
	}
	bad, counts := 0, map[string]int{}
	for _, id := range ids {
		places := got[id]
		if len(places) == 1 {
			counts[strings.SplitN(places[0], "/", 2)[0]]++
		}
		if len(places) != 1 || places[0] != want[id] {
			if bad++; bad <= 10 {
				t.Errorf("seed %d: %s is at %v, want [%s]", seed, id, places, want[id])
			}
		}
	}
	t.Logf("end: %d in todo, %d in doing, %d done", counts["todo"], counts["doing"], counts["done"])
	pkCheckHistoryChains(t, b, ids)
}

// TestStressCheckClean: after the stress, doctor finds nothing to report.
func TestStressCheckClean(t *testing.T) {
	b := pkBoard(t)
	ids := pkSeed(t, b, 100)
	var mu sync.Mutex
	var g errgroup.Group
	var claimed int
	for i := 0; i < 8; i++ {
		g.Go(func() error {
			c, err := claim.New(pkOwnBoard(b), fmt.Sprintf("o%d", i))
			if err != nil {
				return err
			}
			for {
				s, err := c.Next(context.Background())
				if errors.Is(err, claim.ErrNothingAvailable) {
					return nil
				}
				if err != nil {
					return err
				}
				if i%2 == 0 {
					if _, err := c.Done(context.Background(), s.ID); err != nil {
						return err
					}
				}
				mu.Lock()
				claimed++
				mu.Unlock()
			}
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if claimed != len(ids) {
		t.Errorf("%d claims, want %d", claimed, len(ids))
	}
	findings, err := b.Check(false)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("doctor after the stress: %s %s: %s", f.Kind, f.Path, f.Message)
	}
}
