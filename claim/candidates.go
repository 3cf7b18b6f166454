package claim

import (
	"os"

	"github.com/pickup-dev/pickup/sessions"
)

// peekSize is how many of the best sessions a one-shot Next decodes from the
// listing cache: one usually suffices, the rest cover lost races.
const peekSize = 16

// candidates lists todo/ in order, without the sessions that wait on
// dependencies or that skip names, and says how many waited on
// dependencies.
//
// A Queue without a snapshot takes one session per listing, so it only
// needs the best few: it peeks at them through the listing cache, which
// costs no file read and no allocation per session. It lists all of todo/
// when the cache cannot answer, or when none of the best few can be taken
// but others exist beyond them.
func (q *Queue) candidates(skip func(id string) bool) ([]sessions.Session, int, error) {
	// Heal the queue first: sessions of owners whose process is gone go
	// back to todo/. Cheap when doing/ holds no other owner with a lease.
	leases := &Leases{Board: q.c.Board}
	if _, err := leases.Reap(ReapOptions{OnlyDead: true, Except: q.c.Owner}); err != nil {
		return nil, 0, err
	}
	deps := q.depsDone()
	if q.opts.Snapshot <= 0 {
		first, more, ok := q.c.Board.Peek(sessions.Todo, peekSize)
		if ok {
			ready, blocked := filterReady(first, skip, deps)
			if len(ready) > 0 || more == 0 {
				return ready, blocked, nil
			}
		}
	}
	list, err := q.c.Board.ScanState(sessions.Todo)
	if err != nil {
		return nil, 0, err
	}
	ready, blocked := filterReady(list, skip, deps)
	return ready, blocked, nil
}

// depsDone returns a function that reports whether every dependency of a
// session is done, looking each one up once.
func (q *Queue) depsDone() func(sessions.Session) bool {
	var done map[string]bool
	isDone := func(id string) bool {
		d, ok := done[id]
		if !ok {
			info, err := os.Lstat(q.c.Board.Path(sessions.Done, "", id))
			d = err == nil && info.Mode().IsRegular()
			if done == nil {
				done = map[string]bool{}
			}
			done[id] = d
		}
		return d
	}
	return func(s sessions.Session) bool {
		for _, dep := range s.DependsOn {
			if !isDone(dep) {
				return false
			}
		}
		return true
	}
}

// filterReady keeps, in place, the sessions that skip does not name and
// whose dependencies are done, and counts those left waiting on
// dependencies.
func filterReady(list []sessions.Session, skip func(id string) bool, ready func(sessions.Session) bool) ([]sessions.Session, int) {
	out := list[:0]
	blocked := 0
	for _, s := range list {
		switch {
		case skip != nil && skip(s.ID):
		case !ready(s):
			blocked++
		default:
			out = append(out, s)
		}
	}
	return out, blocked
}
