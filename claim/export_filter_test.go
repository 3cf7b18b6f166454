package claim

import "sync/atomic"

// CountListings makes q add one to n after each listing of todo/, so that
// a test sees whether a waiter looked at the board.
func CountListings(q *Queue, n *atomic.Int64) {
	q.miss = func() bool { n.Add(1); return false }
}
