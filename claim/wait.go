package claim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// DefaultRescan is how often a waiter lists the board even without any
// event: inotify can drop events (queue overflow) and readdir can skip
// entries while others rename, so a session that sits in todo/ is found
// within this bound whatever happened to its events. It costs one listing.
const DefaultRescan = 5 * time.Second

// pollRescan is how often a waiter lists the board when the machine gives
// it no watcher: its inotify instances or watches are used up
// (fs.inotify.max_user_instances, max_user_watches: editors, IDEs and
// file syncers take many). It then polls rather than fails.
const pollRescan = time.Second

// watchLimit reports whether err is the machine's inotify limits refusing
// a watcher (inotify_init1: EMFILE, ENFILE; inotify_add_watch: ENOSPC).
func watchLimit(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOSPC)
}

// polling is the notifier of a waiter without a watcher: it never wakes
// the waiter, whose rescan then does.
type polling struct{}

func (polling) Events() <-chan fsnotify.Event { return nil }
func (polling) Errors() <-chan error          { return nil }
func (polling) Close() error                  { return nil }

// WaitOptions tune Wait.
type WaitOptions struct {
	// Rescan bounds how long a waiter goes without listing todo/ (default
	// DefaultRescan).
	Rescan time.Duration
	// notify replaces the fsnotify watcher in tests.
	notify func(dirs ...string) (notifier, error)
}

// notifier is the part of *fsnotify.Watcher a waiter uses.
type notifier interface {
	Events() <-chan fsnotify.Event
	Errors() <-chan error
	Close() error
}

type fsWatcher struct{ w *fsnotify.Watcher }

func (f fsWatcher) Events() <-chan fsnotify.Event { return f.w.Events }
func (f fsWatcher) Errors() <-chan error          { return f.w.Errors }
func (f fsWatcher) Close() error                  { return f.w.Close() }

func newFSWatcher(dirs ...string) (notifier, error) {
	w, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		if err := w.Add(d); err != nil {
			w.Close()
			return nil, err
		}
	}
	return fsWatcher{w}, nil
}

// Wait claims the best available session like Next, and when there is
// none, blocks until one can be claimed: a new session in todo/, a release,
// a reap, or the last dependency of a waiting session finishing. It returns
// ErrNothingAvailable (wrapped) when ctx is done first; give ctx a deadline
// for a timeout.
//
// Events are hints: a rename shows as Create in the target, events
// coalesce, and the kernel queue may overflow. Each event (or overflow, or
// watcher error) only makes the waiter list todo/ again, and a bounded
// rescan catches anything the events missed. Many waiters on one board are
// safe: each session still goes to exactly one of them, because claiming is
// a rename. An idle waiter sleeps in the kernel; it does not poll, except on
// a machine whose inotify limits give it no watcher, where it lists todo/
// every pollRescan.
func (q *Queue) Wait(ctx context.Context, opts WaitOptions) (sessions.Session, error) {
	rescan := opts.Rescan
	if rescan <= 0 {
		rescan = DefaultRescan
	}
	notify := opts.notify
	if notify == nil {
		notify = newFSWatcher
	}
	b := q.c.Board
	// Watch before the first look, so nothing can arrive unseen between
	// the look and the watch.
	dirs := []string{b.StateDir(sessions.Todo, ""), b.StateDir(sessions.Done, "")}
	w, err := notify(dirs...)
	if errors.Is(err, fs.ErrNotExist) {
		// A clone lacks empty state directories: a claimer makes them.
		for _, d := range dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return sessions.Session{}, &Error{Op: "next", Err: err}
			}
		}
		w, err = notify(dirs...)
	}
	if watchLimit(err) {
		// Out of inotify instances or watches: wait all the same, listing
		// todo/ every pollRescan (a session still goes to one waiter: the
		// claim is a rename, whoever looks).
		w, err, rescan = polling{}, nil, min(rescan, pollRescan)
	}
	if err != nil {
		return sessions.Session{}, &Error{Op: "next", Err: err}
	}
	defer w.Close()
	// On a shared board: in line with its arbiter first, then kept in
	// line while the wait lasts, so that sessions made or released
	// elsewhere land in todo/; a pool does that once for all its workers
	// (inLine).
	if a := q.c.arbiterOf(); a.Where() != "" && !q.inLine {
		if err := q.c.ready(ctx, a, false); err != nil {
			return sessions.Session{}, err
		}
		defer a.Watch(ctx, q.c.warned())()
	}
	timer := time.NewTimer(rescan)
	defer timer.Stop()
	for {
		s, err := q.next(context.WithoutCancel(ctx))
		if err == nil || !errors.Is(err, ErrNothingAvailable) {
			return s, err
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(rescan)
		// The owners holding sessions whose processes run here: the
		// moment one exits, its sessions may be reaped and claimed, not
		// at the next rescan.
		exits := q.ownerExits()
	sleep:
		for {
			select {
			case <-exits.C:
				q.invalidate()
				break sleep
			case <-ctx.Done():
				exits.Close()
				if errors.Is(ctx.Err(), context.Canceled) {
					// Interrupted, not timed out: say so (pickup exits 130).
					err = &Error{Op: "next", Err: fmt.Errorf("%w: %w", ErrNothingAvailable, context.Canceled)}
				}
				return sessions.Session{}, err
			case <-timer.C:
				break sleep
			case ev, ok := <-w.Events():
				if !ok {
					exits.Close()
					return sessions.Session{}, &Error{Op: "next", Err: errors.New("watcher closed")}
				}
				if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Rename) || ev.Has(fsnotify.Write) {
					if _, ok := sessions.IsSessionName(baseName(ev.Name)); ok && q.mayMatch(ev.Name) {
						q.invalidate()
						break sleep
					}
				}
			case <-w.Errors():
				// Overflow or a watcher error: events were lost, look.
				q.invalidate()
				break sleep
			}
		}
		exits.Close()
	}
}

// ownerExits watches the processes of the other owners that hold
// sessions (doing/<owner>/), as their leases name them; only processes of
// this machine and pid namespace can be watched (proc.Env.WatchExits). A
// process exiting proves nothing by itself: the listing it triggers reaps
// an owner only once every process of its lease is provably gone.
func (q *Queue) ownerExits() *proc.ExitWatch {
	b := q.c.Board
	owners, err := b.Owners()
	if err != nil || len(owners) == 0 {
		return &proc.ExitWatch{}
	}
	leases := &Leases{Board: b}
	var ps []proc.Process
	for _, o := range owners {
		if o == q.c.Owner {
			continue
		}
		if l, err := leases.Get(o); err == nil {
			ps = append(ps, processesOf(l.Holders)...)
		}
	}
	if len(ps) == 0 {
		return &proc.ExitWatch{}
	}
	return proc.Env{}.WatchExits(ps)
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// mayMatch reports whether the session file at path, named by an event,
// could give a filtered queue something to claim: any file outside todo/
// (a dependency finishing in done/ may free a matching session), and in
// todo/ a file that is there and that the filter matches. A filtered
// waiter thus reads one file for an event about a session it does not
// want, and goes back to sleep without listing todo/: it neither wakes nor
// spins on a busy board's other work. A file gone since the event left
// todo/, which frees nothing; one edited to match gives an event of its
// own.
func (q *Queue) mayMatch(path string) bool {
	f := q.opts.Filter
	b := q.c.Board
	if f.Empty() || filepath.Dir(path) != filepath.Clean(b.StateDir(sessions.Todo, "")) {
		return true
	}
	s, _, err := b.Read(sessions.Place{State: sessions.Todo, Path: path})
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	return err != nil || f.Match(s) // unreadable: let a listing decide
}
