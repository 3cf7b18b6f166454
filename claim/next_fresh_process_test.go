package claim_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/cli"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sync/errgroup"
)

// TestProcessesDrainWithArrivals: OS processes looping `pickup next` drain
// a board while `new` adds high-priority sessions to it, so that the
// trusted listing (sessions.PeekFresh) is made, used, dropped and made
// again under contention. Every session, seeded or added, is claimed by
// exactly one process, and none is left.
func TestProcessesDrainWithArrivals(t *testing.T) {
	seeded, added := 1000, 200
	if testing.Short() {
		seeded, added = 100, 20
	}
	const procs = 4
	exe := pickupBinary(t)
	b := pkBoard(t)
	ids := pkSeed(t, b, seeded)

	var (
		mu       sync.Mutex
		wins     = map[string][]string{}
		produced atomic.Bool
	)
	var g errgroup.Group
	g.Go(func() error {
		defer produced.Store(true)
		for i := range added {
			s, err := b.Create(sessions.Meta{Priority: sessions.High, Title: fmt.Sprintf("added %d", i)}, []byte("# added\n"))
			if err != nil {
				return err
			}
			mu.Lock()
			ids = append(ids, s.ID)
			mu.Unlock()
			time.Sleep(time.Millisecond)
		}
		return nil
	})
	for p := range procs {
		owner := fmt.Sprintf("p%d", p)
		g.Go(func() error {
			for {
				done := produced.Load() // before the call: an exit 3 after it is final
				var stdout, stderr bytes.Buffer
				cmd := pickupCmd(exe, "--dir", b.Dir, "--owner", owner, "--no-sync", "next", "--json")
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				var exit *exec.ExitError
				if errors.As(err, &exit) && exit.ExitCode() == cli.ExitNotAvailable {
					if done {
						return nil
					}
					continue // more may come
				}
				if err != nil {
					return fmt.Errorf("%s: pickup next: %v\nstderr: %s", owner, err, stderr.String())
				}
				var s struct{ ID, State, Owner string }
				if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
					return fmt.Errorf("%s: output %q: %v", owner, stdout.String(), err)
				}
				if s.State != "doing" || s.Owner != owner {
					return fmt.Errorf("%s: claimed %s but it is %s/%s", owner, s.ID, s.State, s.Owner)
				}
				mu.Lock()
				wins[owner] = append(wins[owner], s.ID)
				mu.Unlock()
			}
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	pkCheckClaimedOnce(t, b, ids, wins)
}
