package boardfeed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/boardview"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// live is what Run keeps while it runs.
type live struct {
	f      *Feed
	ctx    context.Context
	out    chan boardview.Event
	waited map[string]bool      // processes whose exit is awaited, and for what (pidWait)
	due    map[string]time.Time // owner → when its judgment changes by itself ("" key: the locks)
	timer  *time.Timer
	// stop is a pipe's read end that turns readable (hung up) when ctx
	// ends: what wakes the goroutines blocked in poll(2) on pidfds.
	stop int
	// judging serializes the judgments and their reports: a report made
	// from an older look at the board never comes after a newer one's.
	judging sync.Mutex
}

func (l *live) stopFd() int { return l.stop }

// Run reports the board's events to send, in batches (all that arrived
// while the last batch was being sent), until ctx ends. A watcher that
// stops is reported as a FeedStatus, and so is each fetch of a shared
// board.
func (f *Feed) Run(ctx context.Context, send func([]boardview.Event)) {
	l := &live{f: f, ctx: ctx, out: make(chan boardview.Event, 4096), waited: map[string]bool{}, due: map[string]time.Time{}}
	l.startStop()
	l.timer = time.AfterFunc(time.Hour, l.fire)
	l.timer.Stop()
	defer l.timer.Stop()
	go func() {
		err := claim.Watch(ctx, f.B, l.change)
		if ctx.Err() == nil {
			msg := "the board's watcher stopped"
			if err != nil {
				msg = err.Error()
			}
			l.emit(boardview.FeedStatus{At: f.now(), WatchErr: msg})
		}
	}()
	go l.watchRuntime()
	if f.follow != nil {
		go l.follow()
	}
	// What the snapshot judged alive is awaited from now on.
	if owners, err := f.ownerNames(); err == nil {
		for _, n := range owners {
			l.rejudge(n, false)
		}
	}
	l.relistLocks(false)
	for {
		var batch []boardview.Event
		select {
		case <-ctx.Done():
			return
		case e := <-l.out:
			batch = append(batch, e)
		}
	more:
		for {
			select {
			case e := <-l.out:
				batch = append(batch, e)
			default:
				break more
			}
		}
		send(batch)
	}
}

func (l *live) emit(e boardview.Event) {
	select {
	case l.out <- e:
	case <-l.ctx.Done():
	}
}

// change turns a change the watcher saw into the board's event.
func (l *live) change(c claim.Change) {
	f := l.f
	switch c.Event {
	case "removed":
		l.emit(boardview.Removed{At: c.Time, ID: c.ID, State: c.State, Owner: c.Owner})
		return
	case "rescan":
		if snap, err := f.Snapshot(); err == nil {
			snap.Watching = true
			l.emit(boardview.Rescanned{Snapshot: snap})
		}
		return
	}
	if c.State == sessions.Failed {
		list, err := f.B.ListSetAside()
		if err != nil {
			return
		}
		for _, x := range list {
			if x.ID == c.ID {
				l.emit(boardview.Arrived{At: c.Time, Item: boardview.Item{Session: x.Session, Since: x.Since, LastError: x.LastError}})
			}
		}
		return
	}
	s, _, err := f.B.Read(sessions.Place{State: c.State, Owner: c.Owner, Path: f.B.Path(c.State, c.Owner, c.ID)})
	if err != nil {
		return // moved on already: its next change comes
	}
	it := f.item(s)
	if c.State != sessions.Doing {
		it.Since = c.Time
	}
	l.emit(boardview.Arrived{At: c.Time, Item: it})
	if c.Owner != "" {
		l.rejudge(c.Owner, true)
	}
}

// rejudge judges owner again and reports it (or that it is gone), and
// awaits what changes the judgment next: the exit of a process that keeps
// it alive, or the moment its heartbeat grows stale.
func (l *live) rejudge(owner string, report bool) {
	f := l.f
	l.judging.Lock()
	defer l.judging.Unlock()
	// Its holders' exits are awaited before the judgment (see pidWait).
	lease, _ := f.leases.Get(owner)
	for _, h := range lease.Holders {
		l.pidWait(owner, proc.Process(h), func() { l.rejudge(owner, true) })
	}
	o, ok := f.judge(owner)
	if f.afterJudge != nil {
		f.afterJudge(owner, o, report)
	}
	if report {
		if ok {
			l.emit(boardview.Judged{At: f.now(), Owner: o})
		} else {
			l.emit(boardview.Forgotten{At: f.now(), Name: owner})
		}
	}
	switch o.State {
	case claim.OwnerUnknown:
		last := o.Heartbeat
		if o.LeaseCreated.IsZero() {
			// Without a lease its newest claim stands in for a heartbeat.
			list, _ := f.B.ListOwner(owner)
			for _, s := range list {
				if since := f.item(s).Since; since.After(last) {
					last = since
				}
			}
		}
		if !last.IsZero() {
			l.setDue(owner, last.Add(f.stale))
		}
	default:
		l.setDue(owner, time.Time{})
	}
}

// relistLocks lists the locks again and reports them, and awaits what
// changes their states next: a holder's exit, a TTL running out.
func (l *live) relistLocks(report bool) {
	f := l.f
	l.judging.Lock()
	defer l.judging.Unlock()
	// The holders' exits are awaited before the locks are judged (see
	// pidWait): a first listing names them, the second judges.
	held, err := f.locks.List()
	if err != nil {
		return
	}
	awaited := map[proc.Process]bool{}
	for _, k := range held {
		if k.State == claim.LockAlive && l.pidWait("", proc.Process(k.Process), func() { l.relistLocks(true) }) {
			awaited[proc.Process(k.Process)] = true
		}
	}
	locks, err := f.listLocks()
	if err != nil {
		return
	}
	if f.afterLocks != nil {
		f.afterLocks(locks, report)
	}
	if report {
		l.emit(boardview.LocksListed{At: f.now(), Locks: locks})
	}
	var next time.Time
	for _, k := range locks {
		if k.State != claim.LockAlive || awaited[proc.Process(k.Process)] {
			continue
		}
		if end := k.HeartbeatAt.Add(k.TTL); k.TTL > 0 && (next.IsZero() || end.Before(next)) {
			next = end
		}
	}
	l.setDue("", next)
}

// setDue notes when key's judgment changes by itself (zero: never) and
// sets the timer to the first such moment.
func (l *live) setDue(key string, at time.Time) {
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	if at.IsZero() {
		delete(l.due, key)
	} else {
		l.due[key] = at
	}
	var first time.Time
	for _, t := range l.due {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	l.timer.Stop()
	if !first.IsZero() {
		l.timer.Reset(max(first.Sub(l.f.now()), 0) + 10*time.Millisecond)
	}
}

// fire judges again what is due.
func (l *live) fire() {
	now := l.f.now()
	l.f.mu.Lock()
	var keys []string
	for k, t := range l.due {
		if !t.After(now) {
			keys = append(keys, k)
			delete(l.due, k)
		}
	}
	l.f.mu.Unlock()
	for _, k := range keys {
		if k == "" {
			l.relistLocks(true)
		} else {
			l.rejudge(k, true)
		}
	}
	l.setDue("", l.peekDue(""))
}

func (l *live) peekDue(key string) time.Time {
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	return l.due[key]
}

// watchRuntime watches what claim.Watch does not: leases (heartbeats, new
// and removed owners), locks, and events.log.
func (l *live) watchRuntime() {
	f := l.f
	w, err := fsnotify.NewWatcher()
	if err != nil {
		l.emit(boardview.FeedStatus{At: f.now(), WatchErr: err.Error()})
		return
	}
	defer w.Close()
	leases, locks := f.leasesDir(), f.locks.Dir
	add := func() {
		for _, d := range []string{f.B.Dir, f.B.RuntimeDir(), leases, locks} {
			_ = w.Add(d) // those missing are added when they appear
		}
	}
	add()
	for {
		select {
		case <-l.ctx.Done():
			return
		case err := <-w.Errors:
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				if snap, err := f.Snapshot(); err == nil {
					snap.Watching = true
					l.emit(boardview.Rescanned{Snapshot: snap})
				}
			}
		case e := <-w.Events:
			dir, name := filepath.Dir(e.Name), filepath.Base(e.Name)
			switch {
			case e.Has(fsnotify.Create) && (e.Name == f.B.RuntimeDir() || e.Name == leases || e.Name == locks):
				add()
				// What was made in them before they were watched made
				// no event: a lease written with its directory.
				entries, _ := os.ReadDir(leases)
				for _, d := range entries {
					if owner, ok := strings.CutSuffix(d.Name(), ".json"); ok && sessions.ValidateOwner(owner) == nil {
						l.rejudge(owner, true)
					}
				}
				l.relistLocks(true)
			case dir == leases && strings.HasSuffix(name, ".json"):
				l.rejudge(strings.TrimSuffix(name, ".json"), true)
			case dir == locks && !strings.HasPrefix(name, "."):
				l.relistLocks(true)
			case dir == f.B.Dir && name == sessions.EventLogFile:
				if events, err := f.readLog(false); err == nil && len(events) > 0 {
					l.emit(boardview.Logged{At: f.now(), Events: events})
				}
			}
		}
	}
}
