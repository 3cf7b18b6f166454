package claim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/sessions"
)

// On a shared board (IDSuffix set) next picks among the first candidates
// of the best priority, never a lower priority before a higher one, and
// every session is claimed exactly once.
func TestNextSpreadKeepsPriorities(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b := pkBoard(t)
	boardhook.SetIDSuffix(b, "abcde")
	prio := map[string]sessions.Priority{}
	for i := range 12 {
		p := sessions.Medium
		if i < 5 {
			p = sessions.High
		}
		id := fmt.Sprintf("s%02d", i)
		prio[id] = p
		pkPut(t, b, sessions.Todo, "", id, sessions.Meta{Priority: p, CreatedAt: at.Add(time.Duration(i) * time.Second)})
	}
	c := pkClient(t, b, "alice")
	seen := map[string]bool{}
	for i := range 12 {
		s, err := c.Next(context.Background())
		if err != nil {
			t.Fatalf("Next %d: %v", i, err)
		}
		if seen[s.ID] {
			t.Fatalf("%s claimed twice", s.ID)
		}
		seen[s.ID] = true
		if i < 5 && prio[s.ID] != sessions.High {
			t.Fatalf("claim %d took %s (%s) while high-priority sessions waited", i, s.ID, prio[s.ID])
		}
	}
}
