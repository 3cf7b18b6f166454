package claim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/testbound"
	"github.com/pickup-dev/pickup/sessions"
)

// TestPoolNotStarted: a Run that could not start (ErrNotStarted) is not
// the session's doing. The pool releases that session to todo/ as it was
// (no attempt, no last_error, byte for byte), stops claiming at once, lets
// the runs already going finish, and Serve returns the error; nothing is
// set aside however low MaxAttempts is.
func TestPoolNotStarted(t *testing.T) {
	const n = 20
	tests := []struct {
		name string
		jobs int
		// fails says whether the run of the k-th claim (from 0) cannot
		// start; the others sleep a moment and succeed.
		fails func(k int) bool
		// done is how many sessions end in done/ at most.
		maxDone int
	}{
		{name: "every run, one worker", jobs: 1, fails: func(int) bool { return true }},
		{name: "every run, four workers", jobs: 4, fails: func(int) bool { return true }},
		{name: "the third claim, four workers", jobs: 4, fails: func(k int) bool { return k == 2 }, maxDone: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			ids := make([]string, n)
			before := map[string][]byte{}
			for i := range ids {
				ids[i] = fmt.Sprintf("s%02d", i)
				before[ids[i]] = pkPut(t, b, sessions.Todo, "", ids[i], sessions.Meta{})
			}
			c, err := claim.New(b, "w")
			if err != nil {
				t.Fatal(err)
			}
			var claims atomic.Int32
			var mu sync.Mutex
			var events []claim.WorkEvent
			notFound := fmt.Errorf("cannot start no-such-command: %w", claim.ErrNotStarted)
			p := &claim.Pool{Client: c, Jobs: tt.jobs, MaxAttempts: 1,
				Run: func(ctx context.Context, _ int, s sessions.Session) error {
					if tt.fails(int(claims.Add(1) - 1)) {
						return notFound
					}
					time.Sleep(20 * time.Millisecond) // still running when the pool halts
					return nil
				},
				Event: func(ev claim.WorkEvent) {
					mu.Lock()
					events = append(events, ev)
					mu.Unlock()
				},
			}
			sum, err := p.Serve(context.Background())
			if !errors.Is(err, claim.ErrNotStarted) || err != notFound {
				t.Fatalf("Serve = %v, want the Run's error", err)
			}
			places := wkPlaces(t, b, ids)
			if len(places["failed"]) > 0 || sum.Failed > 0 || sum.SetAside > 0 {
				t.Errorf("set aside %v, summary %+v: a run that never started counted as a failure", places["failed"], sum)
			}
			if len(places["doing/w"]) > 0 {
				t.Errorf("%v still claimed", places["doing/w"])
			}
			if len(places["done"]) > tt.maxDone || sum.Done != len(places["done"]) {
				t.Errorf("%d done (summary %+v), want at most %d: the pool went on claiming after it halted", len(places["done"]), sum, tt.maxDone)
			}
			if int(claims.Load()) > tt.maxDone+tt.jobs {
				t.Errorf("%d claims, want at most %d: the pool went on claiming after it halted", claims.Load(), tt.maxDone+tt.jobs)
			}
			if sum.Released == 0 || sum.Claimed != sum.Done+sum.Released {
				t.Errorf("summary %+v: every claim should be done or released", sum)
			}
			for _, id := range places["todo"] {
				data, err := os.ReadFile(b.Path(sessions.Todo, "", id))
				if err != nil || string(data) != string(before[id]) {
					t.Errorf("%s changed in todo/ (%v):\n%s", id, err, data)
				}
			}
			var released int
			for _, ev := range events {
				if ev.Event == "released" {
					released++
					if ev.Error != notFound.Error() {
						t.Errorf("released event %+v does not say why", ev)
					}
				}
				if slices.Contains([]string{"failed", "set_aside", "lost"}, ev.Event) {
					t.Errorf("event %+v", ev)
				}
			}
			if released != sum.Released {
				t.Errorf("%d released events, summary %+v", released, sum)
			}
		})
	}
}

// TestPoolWaiting: Waiting counts the sessions the pool's queue still holds
// for its workers, and how many of them wait on dependencies.
func TestPoolWaiting(t *testing.T) {
	b := pkBoard(t)
	b.NoSync = true
	for i := 0; i < 5; i++ {
		pkPut(t, b, sessions.Todo, "", fmt.Sprintf("s%d", i), sessions.Meta{})
	}
	pkPut(t, b, sessions.Todo, "", "later", sessions.Meta{DependsOn: []string{"s0"}})
	c, err := claim.New(b, "w")
	if err != nil {
		t.Fatal(err)
	}
	p := &claim.Pool{Client: c, Jobs: 1}
	if _, _, ok := p.Waiting(); ok {
		t.Error("Waiting is ok before Serve")
	}
	var seen []string
	p.Run = func(_ context.Context, _ int, s sessions.Session) error {
		ready, blocked, ok := p.Waiting()
		seen = append(seen, fmt.Sprintf("%s:%d+%d:%v", s.ID, ready, blocked, ok))
		return nil
	}
	if _, err := p.Serve(context.Background()); err != nil {
		t.Fatal(err)
	}
	// s0..s4 first (later waits on s0, blocked until s0 is done and todo/
	// is listed again), then later alone.
	want := []string{"s0:4+1:true", "s1:3+1:true", "s2:2+1:true", "s3:1+1:true", "s4:0+1:true", "later:0+0:true"}
	if !slices.Equal(seen, want) {
		t.Errorf("Waiting during each run: %v\nwant %v", seen, want)
	}
}

// TestPoolNotStartedWhileWaiting: a worker waiting for new sessions (Wait,
// with or without Until) stops waiting as soon as another worker's run
// could not start.
func TestPoolNotStartedWhileWaiting(t *testing.T) {
	// Until, when set, is far beyond the bound below: a Serve that ends
	// because Until passed, or because the bound did, did not stop on the
	// failed start.
	for _, until := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprintf("until %v", until), func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			pkPut(t, b, sessions.Todo, "", "only", sessions.Meta{})
			c, err := claim.New(b, "w")
			if err != nil {
				t.Fatal(err)
			}
			p := &claim.Pool{Client: c, Jobs: 2, Wait: true,
				Run: func(context.Context, int, sessions.Session) error {
					time.Sleep(50 * time.Millisecond) // the other worker is waiting by now
					return fmt.Errorf("cannot start: %w", claim.ErrNotStarted)
				},
			}
			if until > 0 {
				p.Until = time.Now().Add(until)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testbound.Idle)
			defer cancel()
			_, err = p.Serve(ctx)
			if !errors.Is(err, claim.ErrNotStarted) {
				t.Errorf("Serve = %v, want ErrNotStarted", err)
			}
			if ctx.Err() != nil {
				t.Errorf("Serve returned only when the test's bound (%s) ended it: the waiting worker did not stop", testbound.Idle)
			}
		})
	}
}
