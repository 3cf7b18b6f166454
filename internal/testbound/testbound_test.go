package testbound

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWatchGivesUpWithoutProgress: a Watch whose bound passes with no
// progress ends its context, and says what it last saw.
func TestWatchGivesUpWithoutProgress(t *testing.T) {
	w := New(t, 200*time.Millisecond)
	w.Progress("step %d", 1)
	<-w.Context().Done() // go test's -timeout catches a Watch that never gives up
	err := w.Err()
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "step 1") {
		t.Fatalf("Err() = %v, want ErrStalled naming the last progress (step 1)", err)
	}
	if w.Until(func() bool { return false }) {
		t.Fatal("Until held after the Watch gave up")
	}
}

// TestWatchObserve: a sampled value that changes counts as progress and is
// named in Status; a Watch that keeps progressing keeps its context.
func TestWatchObserve(t *testing.T) {
	w := New(t, time.Hour)
	var n atomic.Int64
	w.Observe(func() string { return "moved " + string(rune('0'+n.Load())) })
	n.Store(3)
	if !w.Until(func() bool { return strings.Contains(w.Status(), "moved 3") }) {
		t.Fatalf("the change was not seen: %v", w.Err())
	}
	if w.Err() != nil || w.Context().Err() != nil {
		t.Fatalf("the Watch gave up while progressing: %v", w.Err())
	}
}

// TestWatchEndsWithTheTest: the context ends when the test does.
func TestWatchEndsWithTheTest(t *testing.T) {
	var ctx context.Context
	t.Run("inner", func(t *testing.T) { ctx = New(t, time.Hour).Context() })
	if ctx.Err() == nil {
		t.Fatal("the Watch outlived its test")
	}
}

// TestScaled: PICKUP_TEST_SCALE multiplies a soak's size, never below its
// floor.
func TestScaled(t *testing.T) {
	for _, tc := range []struct {
		env    string
		n, min int
		want   int
	}{{"", 20, 5, 20}, {"0.5", 20, 5, 10}, {"0.1", 20, 5, 5}, {"3", 20, 5, 60}} {
		t.Setenv(ScaleVar, tc.env)
		if got := Scaled(t, tc.n, tc.min); got != tc.want {
			t.Errorf("%s=%q: Scaled(%d, %d) = %d, want %d", ScaleVar, tc.env, tc.n, tc.min, got, tc.want)
		}
	}
}
