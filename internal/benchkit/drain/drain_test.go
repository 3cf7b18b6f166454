package drain

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/benchkit"
	"github.com/pickup-dev/pickup/sessions"
)

// TestFloors: every rung of the ladder claims each session once, leaves
// todo/ empty, and does its work: a line per claim, the guard file made.
func TestFloors(t *testing.T) {
	const n, workers = 300, 8
	for _, w := range []Work{{}, {Line: true}, {Line: true, Guard: true}, {Line: true, Guard: true, Fresh: true}, {Guard: true, Fresh: true}} {
		t.Run(w.String(), func(t *testing.T) {
			b, err := benchkit.NewBoard(filepath.Join(t.TempDir(), "b"))
			if err != nil {
				t.Fatal(err)
			}
			ids, err := benchkit.Fill(b, sessions.Todo, "", 0, n)
			if err != nil {
				t.Fatal(err)
			}
			r, err := FloorWith(b, ids, workers, w)
			if err != nil {
				t.Fatal(err)
			}
			if r.Claims != n || r.N != n {
				t.Fatalf("claims %d of %d, want %d", r.Claims, r.N, n)
			}
			if left, err := b.ListState(sessions.Todo, false); err != nil || len(left) != 0 {
				t.Fatalf("todo/ holds %d after the floor (%v)", len(left), err)
			}
			log, err := os.ReadFile(filepath.Join(b.Dir, "floor-events.jsonl"))
			switch {
			case w.Line && bytes.Count(log, []byte("\n")) != n:
				t.Errorf("the floor's log has %d lines, want %d (%v)", bytes.Count(log, []byte("\n")), n, err)
			case !w.Line && err == nil:
				t.Error("a floor without lines wrote a log")
			}
			if _, err := os.Stat(filepath.Join(b.RuntimeDir(), guardFile)); w.Guard != (err == nil) {
				t.Errorf("guard %v, but the guard file: %v", w.Guard, err)
			}
		})
	}
}

// TestLibrary: the library drain claims each session once, as it checks.
func TestLibrary(t *testing.T) {
	b, err := benchkit.NewBoard(filepath.Join(t.TempDir(), "b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := benchkit.Fill(b, sessions.Todo, "", 0, 300); err != nil {
		t.Fatal(err)
	}
	r, err := Library(context.Background(), b, 8, time.Second)
	if err != nil || r.Claims != 300 {
		t.Fatalf("Library = %+v, %v; want 300 claims", r, err)
	}
}
