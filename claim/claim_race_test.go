package claim_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sync/errgroup"
)

// TestClaimRacingNeverSaysNotFound: a session that always exists somewhere must
// never be reported as ErrSessionNotFound (exit 4, "no such session") while
// another owner moves it back and forth; losing such a race is
// ErrSessionNotAvailable.
func TestClaimRacingNeverSaysNotFound(t *testing.T) {
	tests := []struct {
		name string
		op   string // what alice does while bob claims and releases
	}{
		{"release another owner's session", "release"},
		{"claim a contended session", "claim"},
	}
	const rounds = 1500
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			pkPut(t, b, sessions.Todo, "", "x", sessions.Meta{})
			bob, alice := pkClient(t, b, "bob"), pkClient(t, b, "alice")
			stop := make(chan struct{})
			var g errgroup.Group
			var bobNotFound int
			g.Go(func() error {
				defer close(stop)
				for i := 0; i < rounds; i++ {
					_, err := bob.Claim(context.Background(), "x")
					if errors.Is(err, claim.ErrSessionNotFound) {
						bobNotFound++
						continue
					}
					if errors.Is(err, claim.ErrSessionNotAvailable) {
						continue // alice has it for a moment
					}
					if err != nil {
						return fmt.Errorf("bob claim %d: %w", i, err)
					}
					if _, err := bob.Release(context.Background(), "x"); err != nil {
						return fmt.Errorf("bob release %d: %w", i, err)
					}
				}
				return nil
			})
			var notFound, tries int
			g.Go(func() error {
				for {
					select {
					case <-stop:
						return nil
					default:
					}
					tries++
					_, err := pkOp(alice, tt.op)("x")
					if err == nil && tt.op == "claim" {
						if _, err := alice.Release(context.Background(), "x"); err != nil {
							return fmt.Errorf("alice release after her claim: %w", err)
						}
						continue
					}
					switch {
					case errors.Is(err, claim.ErrSessionNotFound):
						notFound++
					case !errors.Is(err, claim.ErrSessionNotAvailable):
						return fmt.Errorf("alice %s: %v, want ErrSessionNotAvailable", tt.op, err)
					}
				}
			})
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			if notFound+bobNotFound > 0 {
				t.Errorf("%d of alice's %d %s calls and %d of bob's %d claims on a session that always existed said ErrSessionNotFound",
					notFound, tries, tt.op, bobNotFound, rounds)
			}
			if got := pkWhere(t, b, "x"); got != "todo" {
				t.Errorf("x ended in %s, want todo", got)
			}
		})
	}
}

// TestClaimLinkUnlinkRace races many movers of one source through the
// link+unlink fallback: exactly one wins and no extra name is left.
func TestClaimLinkUnlinkRace(t *testing.T) {
	tests := []struct {
		name    string
		sameDst bool
	}{
		{"distinct destinations", false},
		{"one destination", true},
	}
	const movers, rounds = 16, 100
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for r := 0; r < rounds; r++ {
				src := filepath.Join(dir, fmt.Sprintf("src-%d.md", r))
				content := []byte(fmt.Sprintf("round %d\n", r))
				if err := os.WriteFile(src, content, 0o644); err != nil {
					t.Fatal(err)
				}
				dsts := make([]string, movers)
				for i := range dsts {
					dsts[i] = filepath.Join(dir, fmt.Sprintf("dst-%d-%d.md", r, i))
					if tt.sameDst {
						dsts[i] = filepath.Join(dir, fmt.Sprintf("dst-%d.md", r))
					}
				}
				var (
					mu      sync.Mutex
					winners []int
					start   = make(chan struct{})
					g       errgroup.Group
				)
				for i := 0; i < movers; i++ {
					g.Go(func() error {
						<-start
						err := fsx.LinkUnlink(src, dsts[i])
						if err == nil {
							mu.Lock()
							winners = append(winners, i)
							mu.Unlock()
							return nil
						}
						var le *os.LinkError
						if !errors.As(err, &le) || !(errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist)) {
							return fmt.Errorf("mover %d: %v, want an *os.LinkError for ENOENT or EEXIST", i, err)
						}
						return nil
					})
				}
				close(start)
				if err := g.Wait(); err != nil {
					t.Fatal(err)
				}
				if len(winners) != 1 {
					t.Fatalf("round %d: %d winners %v, want exactly one", r, len(winners), winners)
				}
				if _, err := os.Lstat(src); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("round %d: source still there: %v", r, err)
				}
				for i, d := range dsts {
					info, err := os.Lstat(d)
					if i == winners[0] || tt.sameDst {
						if err != nil {
							t.Fatalf("round %d: winner's name %s: %v", r, d, err)
						}
						if n := info.Sys().(*syscall.Stat_t).Nlink; n != 1 {
							t.Errorf("round %d: winner's file has %d links, want 1", r, n)
						}
						if got, _ := os.ReadFile(d); !bytes.Equal(got, content) {
							t.Errorf("round %d: content changed", r)
						}
					} else if !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("round %d: loser %d left %s (%v)", r, i, d, err)
					}
				}
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != rounds {
				t.Errorf("%d names left in the directory, want %d (one per round)", len(entries), rounds)
			}
		})
	}
}
