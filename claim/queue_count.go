package claim

// Waiting is how many sessions wait in todo/ as the queue last listed
// them, less those it has handed out since: an estimate for progress
// displays, at most the queue's snapshot old, that costs no listing. blocked
// counts those of the last listing that wait on unfinished dependencies.
// It reports ok false, and nothing else, while the queue is busy listing:
// a display shows its previous figure rather than wait.
func (q *Queue) Waiting() (ready, blocked int, ok bool) {
	if !q.mu.TryLock() {
		return 0, 0, false
	}
	defer q.mu.Unlock()
	return q.pending.count(), q.blocked, true
}

// count is how many sessions are left (none for a nil ordered).
func (o *ordered) count() int {
	if o == nil {
		return 0
	}
	n := len(o.lrefs) - o.lpos
	if o.sorted {
		return n + len(o.keys) - o.pos
	}
	return n + len(o.keys) // the heap shrinks as it hands out
}

// Waiting is the pool's queue's Waiting: how many sessions wait for its
// workers (ok false before Serve starts, or while the queue lists).
func (p *Pool) Waiting() (ready, blocked int, ok bool) {
	q := p.queue.Load()
	if q == nil {
		return 0, 0, false
	}
	return q.Waiting()
}
