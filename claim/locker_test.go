package claim

import (
	"context"
	"errors"
	"sync"
	"testing"
)

func TestLockerSerializesOneKey(t *testing.T) {
	var l Locker
	const workers, times = 16, 200
	counter := 0 // unsynchronized on purpose: the race detector checks the Locker
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range times {
				unlock, err := l.Acquire(context.Background(), "k")
				if err != nil {
					errs <- err
					return
				}
				counter++
				unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if counter != workers*times {
		t.Fatalf("counter = %d, want %d", counter, workers*times)
	}
	if n := l.entries(); n != 0 {
		t.Fatalf("%d entries left, want 0", n)
	}
}

// TestLockerKeysRunInParallel: two goroutines holding different keys meet
// while both hold them; with one mutex for all keys they would deadlock.
func TestLockerKeysRunInParallel(t *testing.T) {
	var l Locker
	ctx := context.Background()
	aHeld, bHeld := make(chan struct{}), make(chan struct{})
	errs := make(chan error, 2)
	run := func(key string, mine, theirs chan struct{}) {
		unlock, err := l.Acquire(ctx, key)
		if err != nil {
			errs <- err
			return
		}
		defer unlock()
		close(mine)
		<-theirs // the other key is held at the same time
		errs <- nil
	}
	go run("a", aHeld, bHeld)
	go run("b", bHeld, aHeld)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestLockerCancelWhileWaiting(t *testing.T) {
	var l Locker
	unlock, err := l.Acquire(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		u, err := l.Acquire(ctx, "k")
		if err == nil {
			u()
			err = errors.New("acquired a held key")
		}
		got <- err
	}()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("waiter got %v, want context.Canceled", err)
	}
	if n := l.entries(); n != 1 {
		t.Fatalf("%d entries while k is held, want 1", n)
	}
	unlock()
	unlock() // idempotent: must not release a later holder
	if n := l.entries(); n != 0 {
		t.Fatalf("%d entries left, want 0", n)
	}
	// The key is free again, and a second unlock did not break it.
	u1, err := l.Acquire(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	l.mu.Lock()
	e := l.m["k"]
	stillHeld := e != nil && len(e.ch) == 1
	l.mu.Unlock()
	if !stillHeld {
		t.Fatal("a stray unlock released a later holder's key")
	}
	u1()
}
