package claim

import (
	"context"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// Test hooks for the external tests (package claim_test).

// Notifier is the watcher interface a waiter uses (*fsnotify.Watcher's
// Events, Errors and Close), so that tests can hand Wait a fake one.
type Notifier = notifier

// NewFSWatcher is the real notifier Wait uses by default: an fsnotify
// watcher on dirs. Tests wrap it to see when a waiter starts to sleep.
func NewFSWatcher(dirs ...string) (Notifier, error) { return newFSWatcher(dirs...) }

// WaitOptionsWith returns WaitOptions with the given safety rescan and, if
// notify is not nil, the notifier Wait watches the board with instead of
// fsnotify. notify is called with the directories Wait needs to watch.
func WaitOptionsWith(rescan time.Duration, notify func(dirs ...string) (Notifier, error)) WaitOptions {
	return WaitOptions{Rescan: rescan, notify: notify}
}

// SetReapHook makes l call f at the named points of each reap: "judged"
// (an owner was found reapable, before its guard is taken) and "fenced"
// (a session's fence is recorded, before it moves).
func SetReapHook(l *Leases, f func(point, owner, id string)) { l.hook = f }

// MissListings makes q's next n listings of todo/ find nothing, as
// readdir(3) may when other processes rename in the directory meanwhile.
func MissListings(q *Queue, n int) {
	q.miss = func() bool {
		if n <= 0 {
			return false
		}
		n--
		return true
	}
}

// Watcher is what Watch needs of its fsnotify watcher (a Notifier that can
// Add directories), so that tests can hand it a fake one.
type Watcher = watcher

// WatchWith is Watch on w instead of a new fsnotify watcher; it does not
// close w.
func WatchWith(ctx context.Context, b *sessions.Board, report func(Change), w Watcher) error {
	return watch(ctx, b, report, w)
}
