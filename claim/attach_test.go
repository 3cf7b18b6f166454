package claim_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// TestSharedBoardWithoutArbiterRefuses: a board whose config.yaml says
// shared: but that has no arbiter attached (a Client made by hand, one
// used after Close, a bare *sessions.Board) refuses every transition,
// naming the board and claim.New, and nothing moves.
func TestSharedBoardWithoutArbiterRefuses(t *testing.T) {
	b, err := sessions.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Create(sessions.Meta{Title: "one"}, nil) // not shared yet
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.Dir, sessions.ConfigFile), []byte("shared: origin\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// claim.New cannot attach the remote (no git clone here): it fails,
	// saying which board.
	if _, err := claim.New(b, "alice"); err == nil || !strings.Contains(err.Error(), b.Dir) {
		t.Fatalf("claim.New on a shared board outside a clone: %v, want an error naming %s", err, b.Dir)
	}

	c := &claim.Client{Board: b, Owner: "alice"}
	_, err = c.Claim(context.Background(), s.ID)
	if !errors.Is(err, claim.ErrNotAttached) || !strings.Contains(err.Error(), "claim.New") || !strings.Contains(err.Error(), b.Dir) {
		t.Fatalf("Claim without an arbiter: %v, want ErrNotAttached naming the board and claim.New", err)
	}
	if _, err := c.NewQueue(claim.NextOptions{}).Next(t.Context()); !errors.Is(err, claim.ErrNotAttached) {
		t.Fatalf("Next without an arbiter: %v, want ErrNotAttached", err)
	}
	if _, err := b.Create(sessions.Meta{Title: "two"}, nil); err == nil || !strings.Contains(err.Error(), "claim.New") {
		t.Fatalf("Create without an arbiter: %v, want a refusal that names claim.New", err)
	}
	todo, _ := b.List(sessions.Todo)
	if len(todo) != 1 || todo[0].ID != s.ID {
		t.Fatalf("after the refusals todo/ holds %v, want just %s (nothing moved)", todo, s.ID)
	}
}
