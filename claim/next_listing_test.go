package claim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// TestNextSecondListing: readdir(3) may skip entries while other processes
// rename in the same directory, so one listing of todo/ that finds nothing
// proves nothing. Next answers "nothing available" only when a second
// listing in a row agrees: a session that one listing missed is still
// claimed, and only two misses in a row make Next give up. The misses are
// simulated (claim.MissListings), since a real readdir skips entries only
// under load and by chance.
func TestNextSecondListing(t *testing.T) {
	for _, snapshot := range []time.Duration{0, time.Hour} {
		for _, tc := range []struct {
			name   string
			misses int
			claims bool
		}{
			{"every listing sees it", 0, true},
			{"the first listing misses it", 1, true},
			{"two listings in a row miss it", 2, false},
		} {
			t.Run(tc.name+"/snapshot="+snapshot.String(), func(t *testing.T) {
				b := pkBoard(t)
				pkPut(t, b, sessions.Todo, "", "only", sessions.Meta{})
				q := pkClient(t, b, "alice").NewQueue(claim.NextOptions{Snapshot: snapshot})
				claim.MissListings(q, tc.misses)
				s, err := q.Next(context.Background())
				switch {
				case tc.claims && err != nil:
					t.Fatalf("Next = %v, want it to claim the session that %d listing(s) missed", err, tc.misses)
				case tc.claims && s.ID != "only":
					t.Fatalf("Next claimed %q, want only", s.ID)
				case !tc.claims && !errors.Is(err, claim.ErrNothingAvailable):
					t.Fatalf("Next = %v, %v; want ErrNothingAvailable after two empty listings", s.ID, err)
				}
				want := "todo"
				if tc.claims {
					want = "doing/alice"
				}
				if got := pkWhere(t, b, "only"); got != want {
					t.Errorf("the session is in %s, want %s", got, want)
				}
			})
		}
	}
}
