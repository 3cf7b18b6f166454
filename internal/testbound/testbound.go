// Package testbound gives tests two things that keep them honest on a slow,
// busy machine: a bound that catches a hang counted from the last progress
// (not from the start of a scenario whose steps run at an unknown speed),
// and one setting that scales the size of soak scenarios.
//
// A Watch's context ends when nothing progressed for its idle bound: a
// session moved, a line printed, whatever the test reports with Progress or
// samples with Observe. A scenario of any length passes however slowly it
// runs, as long as each step ends within the bound; a hang fails it, with
// what it last saw. The context also ends a little before go test's own
// -timeout, so that the test fails with its own message (and prints what
// it saw) instead of go test's panic.
//
// Scale reads PICKUP_TEST_SCALE (a number, 1 when unset): soak tests
// multiply their rounds or sessions by it. It changes how much a test does,
// never what it accepts.
//
// The package is for tests only (it imports testing); nothing outside
// _test.go files and test helpers should use it.
package testbound

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Idle is the default idle bound: room for one step (a process start, a
// git push, a database round trip) on a machine many times slower than a
// loaded 2-core one. A step that takes longer is a hang.
const Idle = 5 * time.Minute

// beforeTimeout is how long before go test's -timeout a Watch gives up, so
// that the test reports what it saw.
const beforeTimeout = 45 * time.Second

// Watch is a bound counted from the last progress.
type Watch struct {
	tb     testing.TB
	idle   time.Duration
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	last     time.Time
	what     string
	samplers []*sampler
}

type sampler struct {
	sample func() string
	seen   string
}

// ErrStalled is the cause of a Watch's context ending because nothing
// progressed for its idle bound.
var ErrStalled = fmt.Errorf("no progress")

// New starts a Watch with the given idle bound (Idle when 0). Its context
// ends when nothing progressed for idle, shortly before the test binary's
// -timeout, or when the test ends.
func New(tb testing.TB, idle time.Duration) *Watch {
	tb.Helper()
	if idle <= 0 {
		idle = Idle
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	w := &Watch{tb: tb, idle: idle, ctx: ctx, cancel: cancel, last: time.Now(), what: "the start"}
	tb.Cleanup(func() { cancel(context.Canceled) })
	var hard <-chan time.Time
	if dl, ok := deadline(tb); ok {
		timer := time.NewTimer(time.Until(dl) - beforeTimeout)
		tb.Cleanup(func() { timer.Stop() })
		hard = timer.C
	}
	go w.run(hard)
	return w
}

// deadline is go test's -timeout for this test, if it has one.
func deadline(tb testing.TB) (time.Time, bool) {
	if t, ok := tb.(interface{ Deadline() (time.Time, bool) }); ok {
		return t.Deadline()
	}
	return time.Time{}, false
}

// run samples the observed values every 100 ms and ends the context when
// nothing changed for the idle bound.
func (w *Watch) run(hard <-chan time.Time) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-hard:
			w.cancel(fmt.Errorf("go test's -timeout is near (%s)", w.Status()))
			return
		case <-tick.C:
		}
		w.mu.Lock()
		samplers := w.samplers
		w.mu.Unlock()
		for _, s := range samplers {
			if v := s.sample(); v != s.seen {
				s.seen = v
				w.Progress("%s", v)
			}
		}
		w.mu.Lock()
		stalled := time.Since(w.last) > w.idle
		w.mu.Unlock()
		if stalled {
			w.cancel(fmt.Errorf("%w for %s: %s", ErrStalled, w.idle, w.Status()))
			return
		}
	}
}

// Context ends when the Watch gives up (see New); context.Cause says why.
func (w *Watch) Context() context.Context { return w.ctx }

// Progress resets the idle bound; what says what moved (shown when the
// bound is later exceeded).
func (w *Watch) Progress(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = time.Now()
	w.what = fmt.Sprintf(format, args...)
}

// Observe counts every change of sample's value as progress (sampled
// every 100 ms from another goroutine, so sample must be safe to call
// concurrently with the test). The first value is taken now.
func (w *Watch) Observe(sample func() string) {
	s := &sampler{sample: sample, seen: sample()}
	w.mu.Lock()
	w.samplers = append(w.samplers, s)
	w.mu.Unlock()
}

// Status says what progressed last and how long ago.
func (w *Watch) Status() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("last progress %s ago: %s", time.Since(w.last).Round(time.Millisecond), w.what)
}

// Err is nil while the Watch waits, and says why it gave up after.
func (w *Watch) Err() error {
	if w.ctx.Err() == nil {
		return nil
	}
	return context.Cause(w.ctx)
}

// Until polls cond every 50 ms until it holds (true) or the Watch gives
// up (false; Err says why).
func (w *Watch) Until(cond func() bool) bool {
	for {
		if cond() {
			return true
		}
		select {
		case <-w.ctx.Done():
			return cond()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ScaleVar names the setting that scales soak tests.
const ScaleVar = "PICKUP_TEST_SCALE"

// Scale is PICKUP_TEST_SCALE: how many times their default size soak tests
// run (1 when unset; 0.25 makes them a quarter as big, 10 ten times). A
// value that is not a positive number fails the test.
func Scale(tb testing.TB) float64 {
	tb.Helper()
	v := os.Getenv(ScaleVar)
	if v == "" {
		return 1
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		tb.Fatalf("%s=%q: want a positive number such as 0.5 or 4", ScaleVar, v)
	}
	return f
}

// Scaled is n times Scale, rounded, and at least min: below min a soak
// proves nothing.
func Scaled(tb testing.TB, n, min int) int {
	tb.Helper()
	s := int(math.Round(float64(n) * Scale(tb)))
	if s < min {
		return min
	}
	return s
}
