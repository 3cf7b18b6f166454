package claim

import (
	"os"

	"github.com/pickup-dev/pickup/sessions"
)

// peekSize is how many of the best sessions a one-shot Next decodes from the
// listing cache: one usually suffices, the rest cover lost races.
const peekSize = 16

// candidates lists todo/ in order, without the sessions that the queue's
// filter does not match, that wait on dependencies, or whose destination
// holds a copy (l.conflicts), and says how many waited on dependencies and
// how many the filter excluded.
//
// A Queue without a snapshot takes one session per listing, so it only
// needs the best few: it peeks at them through the listing cache, which
// costs no file read and no allocation per session (the filter reads only
// each line's tags field). It lists all of todo/ when the cache cannot
// answer, or when none of the best few can be taken but others exist beyond
// them. A Queue with a snapshot keeps a lineup of todo/ from the cache,
// whose sessions it decodes one at a time as their turn comes: draining a
// big board, it finds most of them taken by other claimers and needs only
// their ids.
func (q *Queue) candidates(l *listings) (list *ordered, blocked, excluded int, err error) {
	// Heal the queue first: sessions of owners whose process is gone go
	// back to todo/. Cheap when doing/ holds no other owner with a lease.
	leases := &Leases{Board: q.c.Board}
	if _, err := leases.Reap(ReapOptions{OnlyDead: true, Except: q.c.Owner}); err != nil {
		return nil, 0, 0, err
	}
	l.fromLineup = false
	ready := q.depsDone()
	skip := func(id string) bool {
		return l.conflicts[id] || (q.opts.Skip != nil && q.opts.Skip(id))
	}
	b := q.c.Board
	f := q.opts.Filter
	switch {
	case l.full:
	case q.opts.Snapshot <= 0:
		// First from a full listing that any process made less than
		// b.LineupAge ago, when there is one and it still holds
		// a claimable session; once per call, so that "nothing
		// available" always comes from two full listings.
		if !l.fresh {
			l.fresh = true
			if first, ok := b.PeekFresh(sessions.Todo, peekSize, f); ok {
				if list, blocked := filterReady(first, skip, ready); len(list) > 0 {
					l.fromLineup = true
					return newOrdered(list), blocked, 0, nil
				}
			}
		}
		first, more, excluded, ok := b.PeekMatching(sessions.Todo, peekSize, f)
		if ok {
			list, blocked := filterReady(first, skip, ready)
			if len(list) > 0 || more == 0 {
				return newOrdered(list), blocked, excluded, nil
			}
		}
	default:
		if lineup, ok := b.Lineup(sessions.Todo); ok {
			refs := make([]int32, 0, lineup.Len())
			var excl []int32
			match := lineup.Matching(f)
			for i := range lineup.Len() {
				switch {
				case !match(i):
					excl = append(excl, int32(i))
				case (len(l.conflicts) > 0 || q.opts.Skip != nil) && skip(lineup.ID(i)):
				case !ready(lineup.DependsOn(i)):
					blocked++
				default:
					refs = append(refs, int32(i))
				}
			}
			o := newLineupOrdered(lineup, refs)
			o.lexcl = excl
			return o, blocked, len(excl), nil
		}
	}
	all, err := b.ScanState(sessions.Todo)
	if err != nil {
		return nil, 0, 0, err
	}
	var excl []string
	if !f.Empty() {
		kept := all[:0]
		for _, s := range all {
			if f.Match(s) {
				kept = append(kept, s)
			} else {
				excl = append(excl, s.ID)
			}
		}
		all = kept
	}
	all, blocked = filterReady(all, skip, ready)
	o := newOrdered(all)
	o.vexcl = excl
	return o, blocked, len(excl), nil
}

// depsDone returns a function that reports whether every one of a
// session's dependencies is done, looking each one up once.
func (q *Queue) depsDone() func(dependsOn []string) bool {
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
	return func(dependsOn []string) bool {
		for _, dep := range dependsOn {
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
func filterReady(list []sessions.Session, skip func(id string) bool, ready func(dependsOn []string) bool) ([]sessions.Session, int) {
	out := list[:0]
	blocked := 0
	for _, s := range list {
		switch {
		case skip(s.ID):
		case !ready(s.DependsOn):
			blocked++
		default:
			out = append(out, s)
		}
	}
	return out, blocked
}
