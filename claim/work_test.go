package claim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// wkWalk is pkWalk with failed/ too.
func wkWalk(t *testing.T, b *sessions.Board) map[string][]string {
	t.Helper()
	w, err := pkWalk(b)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(b.StateDir(sessions.Failed, ""))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if id, ok := sessions.IsSessionName(e.Name()); ok {
			w[id] = append(w[id], "failed")
		}
	}
	return w
}

// wkPlaces checks that every id is in exactly one place and returns the
// ids by place ("todo", "doing/<owner>", "done", "failed"), sorted.
func wkPlaces(t *testing.T, b *sessions.Board, ids []string) map[string][]string {
	t.Helper()
	w := wkWalk(t, b)
	if len(w) != len(ids) {
		t.Errorf("the board holds %d names, want %d", len(w), len(ids))
	}
	out := map[string][]string{}
	for _, id := range ids {
		if len(w[id]) != 1 {
			t.Errorf("session %s is in %v, want exactly one place", id, w[id])
			continue
		}
		out[w[id][0]] = append(out[w[id][0]], id)
	}
	for _, l := range out {
		slices.Sort(l)
	}
	return out
}

// wkFile reads session id's file where it is now.
func wkFile(t *testing.T, b *sessions.Board, st sessions.State, id string) (sessions.Session, string) {
	t.Helper()
	s, content, err := b.Read(sessions.Place{State: st, Path: b.Path(st, "", id)})
	if err != nil {
		t.Fatal(err)
	}
	return s, string(content)
}

// wkFailsBefore says how many runs of session i fail before one succeeds:
// every third session always fails; of the others, one in four fails its
// first run, one in four its first two.
func wkFailsBefore(i int) int {
	switch {
	case i%3 == 0:
		return 1 << 30
	case i%4 == 1:
		return 1
	case i%4 == 2:
		return 2
	}
	return 0
}

// served is what Pool.Serve returned.
type served struct {
	sum claim.WorkSummary
	err error
}

// serveInBackground runs p.Serve(stop) on a goroutine; its result arrives
// on the channel.
func serveInBackground(p *claim.Pool, stop context.Context) <-chan served {
	res := make(chan served, 1)
	go func() {
		sum, err := p.Serve(stop)
		res <- served{sum, err}
	}()
	return res
}

// TestPoolAttempts: -j 4 over 200 sessions of which a third always fail
// and some fail their first run or two: the summary, the events, every
// run's attempt, the frontmatter (attempts, last_error) and where each
// session ends up are exactly as predicted; Requeue returns a set-aside
// session to todo/ with its attempts reset.
func TestPoolAttempts(t *testing.T) {
	const n, jobs = 200, 4
	tests := []struct {
		name        string
		maxAttempts int
	}{
		{name: "max attempts 3", maxAttempts: 3},
		{name: "max attempts 2", maxAttempts: 2},
		{name: "max attempts 1", maxAttempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			ids := make([]string, n)
			index := map[string]int{}
			for i := range ids {
				ids[i] = fmt.Sprintf("s%03d", i)
				index[ids[i]] = i
				pkPut(t, b, sessions.Todo, "", ids[i], sessions.Meta{Title: fmt.Sprintf("session %d", i)})
			}
			// What must happen, session by session.
			var want claim.WorkSummary
			wantRuns := map[string][]int{}     // id -> attempts already counted at each run
			wantAttempts := map[string]int{}   // id -> attempts in the frontmatter at the end
			wantPlace := map[string][]string{} // place -> ids
			for i, id := range ids {
				f := wkFailsBefore(i)
				setAside := f >= tt.maxAttempts
				runs := f + 1
				if setAside {
					runs = tt.maxAttempts
				}
				for a := 0; a < runs; a++ {
					wantRuns[id] = append(wantRuns[id], a)
				}
				want.Claimed += runs
				if setAside {
					want.Failed += runs
					want.SetAside++
					wantAttempts[id] = runs
					wantPlace["failed"] = append(wantPlace["failed"], id)
				} else {
					want.Failed += f
					want.Done++
					wantAttempts[id] = f
					wantPlace["done"] = append(wantPlace["done"], id)
				}
			}

			var mu sync.Mutex
			runs := map[string][]int{}
			var events []claim.WorkEvent
			p := &claim.Pool{
				Client:      pkClient(t, b, "pool"),
				Jobs:        jobs,
				MaxAttempts: tt.maxAttempts,
				Run: func(ctx context.Context, worker int, s sessions.Session) error {
					mu.Lock()
					runs[s.ID] = append(runs[s.ID], s.Attempts)
					mu.Unlock()
					if s.State != sessions.Doing || s.Owner != "pool" {
						return fmt.Errorf("run got %s in %s/%s, want it claimed by pool", s.ID, s.State, s.Owner)
					}
					if s.Attempts < wkFailsBefore(index[s.ID]) {
						return fmt.Errorf("exit status %d", 10+s.Attempts)
					}
					return nil
				},
				Event: func(ev claim.WorkEvent) { events = append(events, ev) },
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			got, err := p.Serve(ctx)
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
			if ctx.Err() != nil {
				t.Fatal("the pool did not finish before the deadline")
			}
			if got != want {
				t.Errorf("summary = %+v, want %+v", got, want)
			}
			for _, id := range ids {
				if !slices.Equal(runs[id], wantRuns[id]) {
					t.Errorf("%s: runs saw attempts %v, want %v", id, runs[id], wantRuns[id])
				}
			}
			// The events add up to the summary, and say which attempt.
			var fromEvents claim.WorkSummary
			for _, ev := range events {
				if ev.Time.IsZero() || ev.Worker < 1 || ev.Worker > jobs {
					t.Errorf("event %+v: no time or a bad worker", ev)
				}
				switch ev.Event {
				case "claimed":
					fromEvents.Claimed++
				case "done":
					fromEvents.Done++
				case "failed":
					fromEvents.Failed++
				case "set_aside":
					fromEvents.Failed++
					fromEvents.SetAside++
					if ev.Attempt != tt.maxAttempts || !strings.Contains(ev.Error, "exit status") {
						t.Errorf("set_aside event %+v: want attempt %d and the run's error", ev, tt.maxAttempts)
					}
				default:
					t.Errorf("unexpected event %+v", ev)
				}
			}
			if fromEvents != want {
				t.Errorf("events add up to %+v, want %+v", fromEvents, want)
			}
			// Where each session is, and what its file says.
			places := wkPlaces(t, b, ids)
			for _, place := range []string{"todo", "doing/pool", "done", "failed"} {
				if !slices.Equal(places[place], wantPlace[place]) {
					t.Errorf("%s holds %d sessions %v, want %d %v", place, len(places[place]), places[place], len(wantPlace[place]), wantPlace[place])
				}
			}
			for _, id := range ids {
				st := sessions.Done
				if slices.Contains(wantPlace["failed"], id) {
					st = sessions.Failed
				}
				s, content := wkFile(t, b, st, id)
				if s.Problem != "" {
					t.Errorf("%s: frontmatter broken: %s", id, s.Problem)
				}
				if s.Attempts != wantAttempts[id] {
					t.Errorf("%s in %s: attempts %d, want %d", id, st, s.Attempts, wantAttempts[id])
				}
				if a := wantAttempts[id]; a > 0 {
					wantErr := fmt.Sprintf(`last_error: "exit status %d (attempt %d)"`, 10+a-1, a)
					if !strings.Contains(content, wantErr) {
						t.Errorf("%s: file lacks %s:\n%s", id, wantErr, content)
					}
				} else if strings.Contains(content, "attempts:") || strings.Contains(content, "last_error:") {
					t.Errorf("%s never failed but its file counts attempts:\n%s", id, content)
				}
				if !strings.Contains(content, "title: session "+strconv.Itoa(index[id])+"\n") {
					t.Errorf("%s: the rest of the frontmatter was not kept:\n%s", id, content)
				}
			}

			// Requeue the first set-aside session: back in todo/, attempts
			// reset, and claimable again.
			back := wantPlace["failed"][0]
			c := pkClient(t, b, "someone")
			s, err := c.Requeue(context.Background(), back)
			if err != nil {
				t.Fatalf("Requeue(%s): %v", back, err)
			}
			if s.State != sessions.Todo || s.Attempts != 0 {
				t.Errorf("Requeue returned %s in %s with attempts %d, want todo with 0", s.ID, s.State, s.Attempts)
			}
			if s, _ := wkFile(t, b, sessions.Todo, back); s.Attempts != 0 {
				t.Errorf("%s back in todo/ with attempts %d, want 0", back, s.Attempts)
			}
			if got := pkWhere(t, b, back); got != "todo" {
				t.Errorf("%s is in %s after Requeue, want todo", back, got)
			}
			if _, err := c.Requeue(context.Background(), back); !errors.Is(err, claim.ErrSessionNotAvailable) {
				t.Errorf("second Requeue(%s) = %v, want ErrSessionNotAvailable", back, err)
			}
			if s, err := c.Next(context.Background()); err != nil || s.ID != back {
				t.Errorf("Next after Requeue = %s, %v; want %s", s.ID, err, back)
			}
		})
	}
}
