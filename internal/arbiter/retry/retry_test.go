package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

var (
	errDown = errors.New("connection refused")
	errNo   = errors.New("permission denied")
)

// fakeClock is a clock that only sleeping moves.
type fakeClock struct {
	t      time.Time
	slept  []time.Duration
	onTick func()
}

func (c *fakeClock) policy(budget time.Duration) Policy {
	return Policy{
		Budget:    budget,
		Transient: func(err error) bool { return errors.Is(err, errDown) },
		Now:       func() time.Time { return c.t },
		Sleep: func(ctx context.Context, d time.Duration) error {
			c.slept = append(c.slept, d)
			c.t = c.t.Add(d)
			if c.onTick != nil {
				c.onTick()
			}
			return ctx.Err()
		},
		Jitter: func(n int64) int64 { return n / 2 }, // the middle: waits are exactly First, 2·First, …
	}
}

func TestDo(t *testing.T) {
	tests := []struct {
		name      string
		budget    time.Duration
		failures  []error // what tries 1, 2, … return before success
		wantTries int
		wantErr   error
		gaveUp    bool
	}{
		{"first try", 10 * time.Second, nil, 1, nil, false},
		{"rides over two refusals", 10 * time.Second, []error{errDown, errDown}, 3, nil, false},
		{"an answer is not retried", 10 * time.Second, []error{errNo}, 1, errNo, false},
		{"a refusal then an answer", 10 * time.Second, []error{errDown, errNo}, 2, errNo, false},
		{"zero budget: one try", 0, []error{errDown, errDown}, 1, errDown, false},
		// Waits 100, 200, 400, 800 ms (1.5 s), then 1.6 s would pass 3 s.
		{"down past the budget", 3 * time.Second, repeat(errDown, 50), 5, errDown, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeClock{t: time.Unix(0, 0)}
			tries := 0
			err := c.policy(tt.budget).Do(context.Background(), func(n int) error {
				tries++
				if n != tries {
					t.Fatalf("try %d told it is try %d", tries, n)
				}
				if n <= len(tt.failures) {
					return tt.failures[n-1]
				}
				return nil
			})
			if tries != tt.wantTries {
				t.Errorf("%d tries, want %d", tries, tt.wantTries)
			}
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Errorf("err %v, want %v", err, tt.wantErr)
			}
			var g *GaveUpError
			if errors.As(err, &g) != tt.gaveUp {
				t.Errorf("gave up: %v, want %v (%v)", g != nil, tt.gaveUp, err)
			}
			var total time.Duration
			for _, d := range c.slept {
				total += d
			}
			if total > tt.budget {
				t.Errorf("slept %s in all, past the budget %s", total, tt.budget)
			}
			if g != nil && (g.Tries != tries || g.Spent != total) {
				t.Errorf("gave up after %d tries in %s, want %d in %s", g.Tries, g.Spent, tries, total)
			}
		})
	}
}

func TestGaveUpMessage(t *testing.T) {
	err := &GaveUpError{Tries: 5, Spent: 1500 * time.Millisecond, Budget: 3 * time.Second, Err: errDown}
	if got, want := err.Error(), "connection refused (gave up after 5 tries in 1.5s: network_timeout 3s)"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

func TestBackoffGrowsToMax(t *testing.T) {
	p := Policy{Jitter: func(n int64) int64 { return n / 2 }}
	want := []time.Duration{100, 200, 400, 800, 1600, 2000, 2000}
	for i, w := range want {
		if got := p.Backoff(i + 1); got != w*time.Millisecond {
			t.Errorf("Backoff(%d) = %s, want %s", i+1, got, w*time.Millisecond)
		}
	}
	// The real jitter stays in [½, 1½) of the step.
	for range 1000 {
		if d := (Policy{}).Backoff(1); d < First/2 || d >= First*3/2 {
			t.Fatalf("Backoff(1) = %s, outside [%s, %s)", d, First/2, First*3/2)
		}
	}
}

func TestDoStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &fakeClock{t: time.Unix(0, 0)}
	c.onTick = cancel // the wait after the first try is cut short
	tries := 0
	err := c.policy(time.Minute).Do(ctx, func(int) error { tries++; return errDown })
	if tries != 1 || !errors.Is(err, errDown) {
		t.Fatalf("%d tries, err %v; want 1 try and the refusal", tries, err)
	}
}

func repeat(err error, n int) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

// TestDoStartsNoTryWithoutRoom: each refused try takes 700 ms (a git
// process starting on a busy machine). Tries end at 0.7, 1.5, 2.4 and
// 3.5 s (waits 100, 200, 400 ms between them); a fifth after the 800 ms
// wait would end at 5 s, past the 4.5 s budget, where the deadline would
// cut it short and hide the refusal: Do gives up after four.
func TestDoStartsNoTryWithoutRoom(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	tries := 0
	budget := 4500 * time.Millisecond
	err := c.policy(budget).Do(context.Background(), func(int) error {
		tries++
		c.t = c.t.Add(700 * time.Millisecond)
		return errDown
	})
	var gave *GaveUpError
	if !errors.As(err, &gave) || !errors.Is(err, errDown) || tries != 4 {
		t.Fatalf("Do: %v after %d tries, want the refusal after 4", err, tries)
	}
	if spent := c.t.Sub(time.Unix(0, 0)); spent > budget {
		t.Fatalf("Do spent %s, past its %s budget", spent, budget)
	}
}
