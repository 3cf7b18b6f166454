package postgres

import "time"

// WaitMoves returns when a transition happened on any board of the
// database since version since (the database's version differs from it),
// or after at most d, with the version it saw: what a live view (pickup
// board) waits on, where next --wait waits only for arrivals in todo. Pass
// 0 first: it returns at once with the current version.
func (w *Waiter) WaitMoves(since int64, d time.Duration) (int64, error) {
	res, err := w.ch.call("wait", Request{Op: "wait", Moves: true, Since: since, TimeoutMS: int(d / time.Millisecond)})
	if err != nil {
		return since, err
	}
	return res.Version, nil
}

// Beats returns the owners' heartbeats as the last Refresh read them from
// the database (their ages judged on the server's clock then), or nil
// before one.
func (s *Board) Beats() []Beat {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.beats
}
