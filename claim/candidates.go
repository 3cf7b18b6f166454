package claim

import (
	"os"

	"github.com/pickup-dev/pickup/sessions"
)

// candidates lists todo/ in order, without the sessions that wait on
// dependencies, and says how many those were.
func (q *Queue) candidates() ([]sessions.Session, int, error) {
	// Heal the queue first: sessions of owners whose process is gone go
	// back to todo/. Cheap when doing/ holds no other owner with a lease.
	leases := &Leases{Board: q.c.Board}
	if _, err := leases.Reap(ReapOptions{OnlyDead: true, Except: q.c.Owner}); err != nil {
		return nil, 0, err
	}
	list, err := q.c.Board.ScanState(sessions.Todo)
	if err != nil {
		return nil, 0, err
	}
	doneCache := map[string]bool{}
	isDone := func(id string) bool {
		d, ok := doneCache[id]
		if !ok {
			info, err := os.Lstat(q.c.Board.Path(sessions.Done, "", id))
			d = err == nil && info.Mode().IsRegular()
			doneCache[id] = d
		}
		return d
	}
	out := list[:0]
	blocked := 0
	for _, s := range list {
		ready := true
		for _, dep := range s.DependsOn {
			if !isDone(dep) {
				ready = false
				break
			}
		}
		if ready {
			out = append(out, s)
		} else {
			blocked++
		}
	}
	return out, blocked, nil
}
