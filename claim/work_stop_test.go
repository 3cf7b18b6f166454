package claim_test

// Pools that stop, wait for work, and make their work durable (work_test.go
// has attempts and failures).

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// TestPoolStop: cancelling stop while runs are going stops claiming,
// cancels the runs and releases their sessions to todo/ uncounted; what
// finished stays done, and nothing is left in doing/.
func TestPoolStop(t *testing.T) {
	const jobs = 3
	b := pkBoard(t)
	b.NoSync = true
	var ids []string
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("s%02d", i)
		ids = append(ids, id)
		pkPut(t, b, sessions.Todo, "", id, sessions.Meta{})
	}
	// s00..s03 finish at once; the others run until they are stopped.
	started := make(chan string, len(ids))
	stop, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &claim.Pool{
		Client: pkClient(t, b, "pool"), Jobs: jobs, MaxAttempts: 1,
		Run: func(ctx context.Context, _ int, s sessions.Session) error {
			if s.ID < "s04" {
				return nil
			}
			started <- s.ID
			<-ctx.Done()
			return ctx.Err()
		},
	}
	res := serveInBackground(p, stop)
	var running []string
	for len(running) < jobs {
		select {
		case id := <-started:
			running = append(running, id)
		case r := <-res:
			t.Fatalf("Serve returned before it was stopped: %+v, %v", r.sum, r.err)
		case <-time.After(waPatience):
			t.Fatalf("only %d runs started", len(running))
		}
	}
	cancel()
	var r served
	select {
	case r = <-res:
	case <-time.After(waPatience):
		t.Fatal("Serve did not return after stop")
	}
	if r.err != nil {
		t.Fatalf("Serve: %v", r.err)
	}
	want := claim.WorkSummary{Claimed: 4 + jobs, Done: 4, Released: jobs}
	if r.sum != want {
		t.Errorf("summary = %+v, want %+v", r.sum, want)
	}
	places := wkPlaces(t, b, ids)
	if want := ids[:4]; !slices.Equal(places["done"], want) {
		t.Errorf("done holds %v, want %v", places["done"], want)
	}
	if want := ids[4:]; !slices.Equal(places["todo"], want) {
		t.Errorf("todo holds %v, want %v", places["todo"], want)
	}
	for _, id := range running {
		if s, _ := wkFile(t, b, sessions.Todo, id); s.Attempts != 0 {
			t.Errorf("released %s has attempts %d, want 0: a stopped run is no failure", id, s.Attempts)
		}
	}
}

// TestPoolWait: with Wait the pool serves sessions that arrive after it
// started, until it is stopped.
func TestPoolWait(t *testing.T) {
	b := pkBoard(t)
	b.NoSync = true
	const n = 6
	done := make(chan string, n)
	stop, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &claim.Pool{
		Client: pkClient(t, pkOwnBoard(b), "pool"), Jobs: 2, Wait: true,
		Run: func(_ context.Context, _ int, s sessions.Session) error { return nil },
		Event: func(ev claim.WorkEvent) {
			if ev.Event == "done" {
				done <- ev.ID
			}
		},
	}
	res := serveInBackground(p, stop)
	var ids []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("late%d", i)
		ids = append(ids, id)
		pkPut(t, b, sessions.Todo, "", id, sessions.Meta{})
		select {
		case got := <-done:
			if got != id {
				t.Errorf("done %s, want %s", got, id)
			}
		case r := <-res:
			t.Fatalf("Serve returned while waiting: %+v, %v", r.sum, r.err)
		case <-time.After(waPatience):
			t.Fatalf("%s was never done", id)
		}
	}
	cancel()
	r := <-res
	if r.err != nil {
		t.Fatalf("Serve: %v", r.err)
	}
	if want := (claim.WorkSummary{Claimed: n, Done: n}); r.sum != want {
		t.Errorf("summary = %+v, want %+v", r.sum, want)
	}
	if got := wkPlaces(t, b, ids)["done"]; !slices.Equal(got, ids) {
		t.Errorf("done holds %v, want %v", got, ids)
	}
}

// TestPoolDurable: a pool of 8 with fsync on (its goroutines share
// directory and log fsyncs) finishes every session once, and the event log
// holds each claim and each done exactly once.
func TestPoolDurable(t *testing.T) {
	const n = 120
	b := pkBoard(t)
	var ids []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("d%03d", i)
		ids = append(ids, id)
		pkPut(t, b, sessions.Todo, "", id, sessions.Meta{})
	}
	p := &claim.Pool{
		Client: pkClient(t, b, "pool"), Jobs: 8,
		Run: func(_ context.Context, _ int, s sessions.Session) error { return nil },
	}
	sum, err := p.Serve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := (claim.WorkSummary{Claimed: n, Done: n}); sum != want {
		t.Errorf("summary = %+v, want %+v", sum, want)
	}
	if got := wkPlaces(t, b, ids)["done"]; !slices.Equal(got, ids) {
		t.Errorf("done holds %d sessions, want %d", len(got), n)
	}
	events, bad, err := b.Events("")
	if err != nil || len(bad) > 0 {
		t.Fatalf("Events: %v, %d bad lines", err, len(bad))
	}
	seen := map[string]bool{}
	for _, e := range events {
		k := e.Op + " " + e.ID
		if seen[k] {
			t.Errorf("%s logged twice", k)
		}
		seen[k] = true
	}
	for _, id := range ids {
		if !seen["next "+id] || !seen["done "+id] {
			t.Errorf("%s: claim or done missing from the log", id)
		}
	}
}
