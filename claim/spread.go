package claim

import (
	"math/rand/v2"

	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/sessions"
)

// spreadWidth is how many of the best candidates of one priority a claimer
// of a shared board chooses among.
const spreadWidth = 16

// takeSpread is take for a board that many clones share (its id suffix is
// set): it picks at random among the first spreadWidth candidates of the
// best priority instead of always the first. Agents of one clone are
// settled by the rename whatever they pick; agents of different clones
// would otherwise all go for the same session, and all but one lose a
// round trip to the remote for it. Order within a priority is then a
// preference, not a promise; priorities are kept. Elsewhere it is take.
func (q *Queue) takeSpread(l *listings) (sessions.Session, error) {
	s, err := q.take(l)
	if err != nil || boardhook.IDSuffixOf(q.c.Board) == "" {
		return s, err
	}
	k := rand.IntN(spreadWidth)
	q.mu.Lock()
	defer q.mu.Unlock()
	var skipped []sessions.Session
	for range k {
		if q.pending.empty() {
			break
		}
		n, ok := q.pending.next()
		if !ok {
			break
		}
		if n.Priority != s.Priority {
			q.pending.add(n)
			break
		}
		skipped = append(skipped, s)
		s = n
	}
	for _, x := range skipped {
		q.pending.add(x)
	}
	return s, nil
}
