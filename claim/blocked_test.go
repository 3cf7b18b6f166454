package claim_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// TestNextSaysWhyBlocked: when every session left in todo/ waits on
// dependencies, Next fails with ErrNothingAvailable as a *BlockedError that
// says why, those that wait forever first; Wait says the same once Explain
// has looked.
func TestNextSaysWhyBlocked(t *testing.T) {
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	type put struct {
		st    sessions.State
		owner string
		id    string
		prio  sessions.Priority
		deps  []string
	}
	tests := []struct {
		name    string
		board   []put
		want    string
		forever []string
	}{
		{
			name:  "waits on work in progress",
			board: []put{{sessions.Todo, "", "deploy", sessions.Medium, []string{"build"}}, {sessions.Doing, "bob", "build", sessions.Medium, nil}},
			want:  "nothing available: 1 session(s) in todo wait on unfinished dependencies: deploy waits on build",
		},
		{
			name: "missing and a cycle before the others",
			board: []put{
				{sessions.Todo, "", "deploy", sessions.High, []string{"build"}},
				{sessions.Doing, "bob", "build", sessions.Medium, nil},
				{sessions.Todo, "", "release", sessions.Medium, []string{"ghost", "phantom"}},
				{sessions.Todo, "", "a", sessions.Low, []string{"b"}},
				{sessions.Todo, "", "b", sessions.Low, []string{"a"}},
			},
			want: "nothing available: 4 session(s) in todo wait on unfinished dependencies: release waits on ghost, phantom, which do not exist; " +
				"a and b wait on each other (dependency cycle a -> b -> a); deploy waits on build",
			forever: []string{"release", "a", "b"},
		},
		{
			name:    "itself",
			board:   []put{{sessions.Todo, "", "self", sessions.Medium, []string{"self"}}},
			want:    "nothing available: 1 session(s) in todo wait on unfinished dependencies: self waits on itself (dependency cycle self -> self)",
			forever: []string{"self"},
		},
		{
			name: "many: the first few, and how many more",
			board: func() []put {
				var out []put
				for i := range 6 {
					out = append(out, put{sessions.Todo, "", fmt.Sprintf("s%d", i), sessions.Medium, []string{fmt.Sprintf("g%d", i)}})
				}
				return out
			}(),
			want: "nothing available: 6 session(s) in todo wait on unfinished dependencies: s0 waits on g0, which does not exist; s1 waits on g1, which does not exist; " +
				"s2 waits on g2, which does not exist; s3 waits on g3, which does not exist; and 2 more",
			forever: []string{"s0", "s1", "s2", "s3", "s4", "s5"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			for i, p := range tt.board {
				pkPut(t, b, p.st, p.owner, p.id, sessions.Meta{Priority: p.prio, CreatedAt: at.Add(time.Duration(i) * time.Minute), DependsOn: p.deps})
			}
			c := pkClient(t, b, "alice")
			_, err := c.Next(context.Background())
			var be *claim.BlockedError
			if !errors.Is(err, claim.ErrNothingAvailable) || !errors.As(err, &be) {
				t.Fatalf("Next = %v; want a *BlockedError", err)
			}
			if got := be.Error(); got != tt.want {
				t.Errorf("error:\n%s\nwant:\n%s", got, tt.want)
			}
			if !slices.Equal(be.Forever, tt.forever) {
				t.Errorf("Forever = %v, want %v", be.Forever, tt.forever)
			}

			// Wait does not explain at every wake-up; Explain does, once.
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			_, err = c.NewQueue(claim.NextOptions{}).Wait(ctx, claim.WaitOptions{})
			if !errors.As(err, &be) || len(be.Why) != 0 {
				t.Fatalf("Wait = %v; want a *BlockedError not explained yet", err)
			}
			if err = c.Explain(err); !errors.As(err, &be) || be.Error() != tt.want {
				t.Errorf("Explain(Wait's error) = %v", err)
			}
		})
	}
}

// TestExplainLeavesOtherErrors: Explain changes nothing but a *BlockedError.
func TestExplainLeavesOtherErrors(t *testing.T) {
	c := pkClient(t, pkBoard(t), "alice")
	plain := &claim.Error{Op: "next", Err: claim.ErrNothingAvailable}
	for _, err := range []error{nil, plain, claim.ErrSessionNotFound} {
		if got := c.Explain(err); got != err {
			t.Errorf("Explain(%v) = %v", err, got)
		}
	}
	if _, err := c.Next(context.Background()); err == nil || err.Error() != "next: nothing available" {
		t.Errorf("Next on an empty board = %v; want plain nothing available", err)
	}
}
