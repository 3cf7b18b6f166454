package claim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sync/atomic"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/cli"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sync/errgroup"
)

// pkCheckHistoryChains checks that the event log lists each session's
// moves in the order they happened: each line starts where the one before
// it left the session. Lines logged out of order (a release appended after
// the next owner's claim of the session) break the chain.
func pkCheckHistoryChains(t *testing.T, b *sessions.Board, ids []string) (lines int) {
	t.Helper()
	bad := 0
	for _, id := range ids {
		events, _, err := b.Events(id)
		if err != nil {
			t.Fatal(err)
		}
		lines += len(events)
		for i := 1; i < len(events); i++ {
			if prev, e := events[i-1], events[i]; e.From != prev.To {
				if bad++; bad <= 5 {
					t.Errorf("history of %s out of order at line %d of its %d: %s by %s from %s, after %s by %s to %s",
						id, i+1, len(events), e.Op, e.Owner, e.From, prev.Op, prev.Owner, prev.To)
				}
			}
		}
	}
	if bad > 5 {
		t.Errorf("… %d breaks in all", bad)
	}
	return lines
}

// TestHistoryInMoveOrder: 12 clients, each with a board of its own (as
// processes have) and fsync on (so a commit takes long after its rename),
// take three sessions from one another as fast as they can: next, then
// release, done or reopen. The log must list every session's moves in
// the order of their renames.
func TestHistoryInMoveOrder(t *testing.T) {
	const workers, rounds = 12, 150
	b := pkBoard(t)
	ids := pkSeed(t, b, 3)
	var g errgroup.Group
	for w := 0; w < workers; w++ {
		c, err := claim.New(&sessions.Board{Dir: b.Dir}, fmt.Sprintf("w%02d", w))
		if err != nil {
			t.Fatal(err)
		}
		g.Go(func() error {
			ctx := context.Background()
			for r := 0; r < rounds; r++ {
				s, err := c.Next(ctx)
				if errors.Is(err, claim.ErrNothingAvailable) {
					continue
				}
				if err != nil {
					return err
				}
				if r%3 == 0 {
					if _, err := c.Done(ctx, s.ID); err != nil {
						return err
					}
					if _, err := c.Reopen(ctx, s.ID); err != nil && !errors.Is(err, claim.ErrSessionNotAvailable) {
						return err
					}
					continue
				}
				if _, err := c.Release(ctx, s.ID); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d lines", pkCheckHistoryChains(t, b, ids))
}

// TestProcessesHistoryInMoveOrder: the same with pickup processes, four
// at a time passing two sessions round with next and release.
func TestProcessesHistoryInMoveOrder(t *testing.T) {
	const procs, rounds = 4, 40
	exe := pickupBinary(t)
	b := pkBoard(t)
	ids := pkSeed(t, b, 2)
	var moved atomic.Int64
	var g errgroup.Group
	for p := 0; p < procs; p++ {
		owner := fmt.Sprintf("p%d", p)
		g.Go(func() error {
			for r := 0; r < rounds; r++ {
				var stdout, stderr bytes.Buffer
				cmd := pickupCmd(exe, "--dir", b.Dir, "--owner", owner, "next", "--json")
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				var exit *exec.ExitError
				if errors.As(err, &exit) && exit.ExitCode() == cli.ExitNotAvailable {
					continue
				}
				if err != nil {
					return fmt.Errorf("%s: pickup next: %v: %s", owner, err, stderr.String())
				}
				var s struct{ ID string }
				if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
					return fmt.Errorf("%s: output %q: %v", owner, stdout.String(), err)
				}
				if out, err := pickupCmd(exe, "--dir", b.Dir, "--owner", owner, "release", s.ID).CombinedOutput(); err != nil {
					return fmt.Errorf("%s: pickup release %s: %v: %s", owner, s.ID, err, out)
				}
				moved.Add(2)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d moves, %d lines", moved.Load(), pkCheckHistoryChains(t, b, ids))
}
