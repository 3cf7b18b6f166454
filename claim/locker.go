package claim

import (
	"context"
	"fmt"
	"sync"
)

// Locker is a keyed mutex for the goroutines of one process: Acquire on the
// same key serializes, different keys run in parallel. Entries exist only
// while someone holds or awaits their key. The zero value is ready to use;
// a Locker must not be copied after first use.
//
// It is in memory only; to exclude other processes use Locks.
type Locker struct {
	mu sync.Mutex
	m  map[string]*lockerEntry
}

// lockerEntry is one key's mutex: a 1-buffered channel (full means held),
// so that a waiter can give up when its context ends. refs counts holders
// and waiters; the entry leaves the map when it drops to zero.
type lockerEntry struct {
	ch   chan struct{}
	refs int
}

// Acquire waits for the key and returns its unlock function, which may be
// called any number of times. If ctx ends first it returns an error
// wrapping ctx.Err() and holds nothing.
func (l *Locker) Acquire(ctx context.Context, key string) (unlock func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("acquire %q: %w", key, err)
	}
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[string]*lockerEntry)
	}
	e := l.m[key]
	if e == nil {
		e = &lockerEntry{ch: make(chan struct{}, 1)}
		l.m[key] = e
	}
	e.refs++
	l.mu.Unlock()

	select {
	case e.ch <- struct{}{}:
	case <-ctx.Done():
		l.unref(key, e)
		return nil, fmt.Errorf("acquire %q: %w", key, ctx.Err())
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-e.ch
			l.unref(key, e)
		})
	}, nil
}

func (l *Locker) unref(key string, e *lockerEntry) {
	l.mu.Lock()
	e.refs--
	if e.refs == 0 {
		delete(l.m, key)
	}
	l.mu.Unlock()
}

// entries reports how many keys are held or awaited (for tests).
func (l *Locker) entries() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
