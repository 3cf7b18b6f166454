package sharedways

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbound"
)

// agentLog is what one agent saw: the sessions it claimed and finished.
type agentLog struct {
	owner   string
	claimed []string
	done    []string
	errs    []string // unexpected exits
}

// agent loops next, done until next says nothing is left (exit 3). A
// remote failure (exit 8) is retried after a pause while retry allows:
// nothing moved, so the same command may run again. Each claim and
// finish is progress for bound; the agent stops when bound gives up.
func agent(bound *testbound.Watch, c *clone, owner string, retry func() bool) *agentLog {
	ctx := bound.Context()
	l := &agentLog{owner: owner}
	for ctx.Err() == nil {
		res := c.pickup(ctx, owner, "next", "--json")
		if res.code == 3 {
			return l
		}
		if res.code == 8 && retry() {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if res.code != 0 {
			l.errs = append(l.errs, fmt.Sprintf("next: exit %d: %s", res.code, res.stderr))
			return l
		}
		var s struct{ ID string }
		if err := json.Unmarshal([]byte(res.stdout), &s); err != nil || s.ID == "" {
			l.errs = append(l.errs, fmt.Sprintf("next --json: %q: %v", res.stdout, err))
			return l
		}
		l.claimed = append(l.claimed, s.ID)
		bound.Progress("%s claimed %s", owner, s.ID)
		for {
			res = c.pickup(ctx, owner, "done", s.ID)
			if res.code == 8 && retry() {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			break
		}
		if res.code != 0 {
			l.errs = append(l.errs, fmt.Sprintf("done %s: exit %d: %s", s.ID, res.code, res.stderr))
			continue
		}
		l.done = append(l.done, s.ID)
		bound.Progress("%s finished %s", owner, s.ID)
	}
	if err := bound.Err(); err != nil {
		l.errs = append(l.errs, fmt.Sprintf("stopped: %v", err))
	}
	return l
}

// drain runs agents per clone until the board is drained and returns
// their logs; bound is the hang it catches (see agent).
func drain(bound *testbound.Watch, cs []*clone, agents int, retry func() bool) []*agentLog {
	var wg sync.WaitGroup
	logs := make([]*agentLog, len(cs)*agents)
	for i, c := range cs {
		for j := range agents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				logs[i*agents+j] = agent(bound, c, fmt.Sprintf("%sa%d", c.name, j), retry)
			}()
		}
	}
	wg.Wait()
	return logs
}

// createFromAll creates n sessions in each clone, the clones at once.
func createFromAll(t *testing.T, cs []*clone, n int) []string {
	var mu sync.Mutex
	var ids []string
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := c.newSessions(n)
			mu.Lock()
			ids = append(ids, got...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return ids
}

// checkDrained checks that every session was claimed once and finished
// once, by the board's history and by the agents' own logs, and that
// every clone ends with the same board as the remote.
func checkDrained(t *testing.T, r *remote, cs []*clone, ids []string, logs []*agentLog) {
	t.Helper()
	for _, l := range logs {
		for _, e := range l.errs {
			t.Errorf("agent %s: %s", l.owner, e)
		}
	}
	uniq := map[string]bool{}
	for _, id := range ids {
		uniq[id] = true
	}
	if len(uniq) != len(ids) {
		t.Fatalf("%d sessions created but only %d distinct ids", len(ids), len(uniq))
	}
	claimedBy := map[string][]string{}
	doneBy := map[string][]string{}
	for _, l := range logs {
		for _, id := range l.claimed {
			claimedBy[id] = append(claimedBy[id], l.owner)
		}
		for _, id := range l.done {
			doneBy[id] = append(doneBy[id], l.owner)
		}
	}
	ops := countOps(r.branchEvents())
	for _, id := range ids {
		if len(claimedBy[id]) != 1 || len(doneBy[id]) != 1 {
			t.Errorf("%s: agents' logs: claimed by %v, done by %v; want once each", id, claimedBy[id], doneBy[id])
		}
		if o := ops[id]; o["new"] != 1 || o["claim"] != 1 || o["done"] != 1 {
			t.Errorf("%s: board history: %v; want new, claim and done once each", id, o)
		}
	}
	files := r.branchFiles()
	done := 0
	for _, f := range files {
		if strings.HasPrefix(f, "done/") {
			done++
		} else if strings.HasPrefix(f, "todo/") || strings.HasPrefix(f, "doing/") {
			t.Errorf("the remote still has %s", f)
		}
	}
	if done != len(ids) {
		t.Errorf("the remote has %d sessions in done/, want %d", done, len(ids))
	}
	var first []string
	var firstLog string
	for i, c := range cs {
		c.must("", "sync")
		got, log := c.boardFiles()
		sort.Strings(got)
		if i == 0 {
			first, firstLog = got, log
			continue
		}
		if strings.Join(got, "\n") != strings.Join(first, "\n") {
			t.Errorf("clone %s's board differs from %s's", c.name, cs[0].name)
		}
		if log != firstLog {
			t.Errorf("clone %s's events.log differs from %s's", c.name, cs[0].name)
		}
	}
}

// TestDrain: 4 clones × 4 agent processes drain sessions created from all
// 4 clones (16 each; PICKUP_TEST_SCALE=12.5 makes it the 200 of a soak):
// every session done exactly once and claimed exactly once, nothing lost,
// each clone ends with the same board.
func TestDrain(t *testing.T) {
	t.Parallel()
	perClone := testbound.Scaled(t, 16, 4)
	for _, kind := range []string{"daemon", "file"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := newRemote(t, kind)
			cs := r.clones(4)
			ids := createFromAll(t, cs, perClone)
			start := time.Now()
			logs := drain(testbound.New(t, 0), cs, 4, func() bool { return false })
			t.Logf("4 clones × 4 agents drained %d sessions in %v", len(ids), time.Since(start).Round(time.Millisecond))
			checkDrained(t, r, cs, ids, logs)
		})
	}
}
