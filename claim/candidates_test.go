package claim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// peekWindow is more than the number of sessions a one-shot Next decodes
// from the listing cache, so that these tests reach past it.
const peekWindow = 40

// TestNextLooksPastTheBestWhenNoneCanBeTaken fills the top of the board
// with sessions that cannot be taken (blocked by a dependency, or already
// copied into the claimer's doing/ by a merge), so that next must look
// beyond the few best it reads from the cache.
func TestNextLooksPastTheBestWhenNoneCanBeTaken(t *testing.T) {
	at := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		block   func(t *testing.T, b *sessions.Board, id string)
		wantErr string // once the takeable one is claimed
	}{
		{name: "blocked by dependencies", block: func(t *testing.T, b *sessions.Board, id string) {
			pkPut(t, b, sessions.Todo, "", id, sessions.Meta{Priority: sessions.High, CreatedAt: at, DependsOn: []string{"never"}})
		}, wantErr: fmt.Sprintf("%d session(s) in todo wait on unfinished dependencies", peekWindow)},
		{name: "in conflict with a copy in doing", block: func(t *testing.T, b *sessions.Board, id string) {
			pkPut(t, b, sessions.Todo, "", id, sessions.Meta{Priority: sessions.High, CreatedAt: at})
			pkPut(t, b, sessions.Doing, "alice", id, sessions.Meta{Priority: sessions.High, CreatedAt: at})
		}, wantErr: fmt.Sprintf("%d session(s) in todo already have a copy in doing/", peekWindow)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			for i := range peekWindow {
				tt.block(t, b, fmt.Sprintf("top-%02d", i))
			}
			pkPut(t, b, sessions.Todo, "", "takeable", sessions.Meta{Priority: sessions.Low, CreatedAt: at})
			if _, err := b.ListState(sessions.Todo, true); err != nil { // warm the cache
				t.Fatal(err)
			}
			c := pkClient(t, b, "alice")
			s, err := c.Next(context.Background())
			if err != nil || s.ID != "takeable" {
				t.Fatalf("Next = %q, %v; want takeable", s.ID, err)
			}
			_, err = c.Next(context.Background())
			if !errors.Is(err, claim.ErrNothingAvailable) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("second Next = %v; want nothing available, saying %q", err, tt.wantErr)
			}
			if _, err := os.Stat(b.Path(sessions.Todo, "", "top-00")); err != nil {
				t.Errorf("top-00 left todo/: %v", err)
			}
		})
	}
}

// TestNextSeesSessionsTheCacheDoesNotKnow checks that a session written
// after the cache, or edited in place of one the cache knows, is ordered by
// what its file says now.
func TestNextSeesSessionsTheCacheDoesNotKnow(t *testing.T) {
	at := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	b := pkBoard(t)
	for i := range peekWindow {
		pkPut(t, b, sessions.Todo, "", fmt.Sprintf("old-%02d", i), sessions.Meta{Priority: sessions.Medium, CreatedAt: at})
	}
	if _, err := b.ListState(sessions.Todo, true); err != nil {
		t.Fatal(err)
	}
	c := pkClient(t, b, "alice")
	pkPut(t, b, sessions.Todo, "", "urgent", sessions.Meta{Priority: sessions.High, CreatedAt: at.Add(time.Hour)})
	if s, err := c.Next(context.Background()); err != nil || s.ID != "urgent" {
		t.Fatalf("Next = %q, %v; want the new high-priority session", s.ID, err)
	}
	// Rewrite old-30 as high priority: same name, new file (a new inode),
	// as editors and SetField do.
	pkPutRaw(t, b, sessions.Todo, "", "tmp", pkContent("old-30", sessions.Meta{Priority: sessions.High, CreatedAt: at}))
	if err := os.Rename(b.Path(sessions.Todo, "", "tmp"), b.Path(sessions.Todo, "", "old-30")); err != nil {
		t.Fatal(err)
	}
	if s, err := c.Next(context.Background()); err != nil || s.ID != "old-30" {
		t.Fatalf("Next = %q, %v; want old-30, raised to high", s.ID, err)
	}
	if s, err := c.Next(context.Background()); err != nil || s.ID != "old-00" {
		t.Fatalf("Next = %q, %v; want old-00", s.ID, err)
	}
}
