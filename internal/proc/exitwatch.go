package proc

// ExitWatch tells at once when one of a set of processes exits, so that a
// waiter need not wait for its next rescan to learn that an owner died
// (Linux: a pidfd per process, polled together). Where processes cannot be
// watched (another system, a fake /proc in tests, a process of another pid
// namespace or host), the watch is simply empty: the caller's rescan still
// finds the death, later.
type ExitWatch struct {
	// C receives one value when a watched process has exited (or may have:
	// the caller re-judges the owners; it never takes this as proof). It
	// is nil when nothing is watched.
	C <-chan struct{}

	stop func()
}

// Close stops watching and releases what the watch holds. It may be
// called more than once.
func (w *ExitWatch) Close() {
	if w != nil && w.stop != nil {
		w.stop()
		w.stop = nil
	}
}
