// Package drain is the 8-goroutine drain of a board through the library and
// its raw floor (goroutines racing plain rename(2) over the same files), as
// claim/bench_test.go and the driver behind scripts/bench both measure it.
package drain

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/benchkit"
	"github.com/pickup-dev/pickup/sessions"
)

// Result is the outcome of draining a board's todo/.
type Result struct {
	N       int           // sessions in todo/ at the start
	Claims  int           // successful claims, all goroutines together
	Elapsed time.Duration // from the start signal until the last goroutine stopped
	// CPU is the CPU time the whole process used meanwhile (user+system,
	// all threads, GC included): on a busy machine it says more than
	// Elapsed about what the drain costs.
	CPU time.Duration
}

// Rate is claims per second.
func (d Result) Rate() float64 { return float64(d.Claims) / d.Elapsed.Seconds() }

// Floor is the raw floor of a drain: workers goroutines walk the same
// list of names in the same order and rename(2) each todo/<name> to
// doing/g<N>/<name>; the loser of each race gets ENOENT and moves on. Nothing
// is listed, read, checked or fsynced: what the renames alone cost on
// the same files. The doing/g<N> directories are made before the clock
// starts. ids are the sessions in todo/ (e.g. benchkit.Fill's result).
func Floor(b *sessions.Board, ids []string, workers int) (Result, error) {
	return floor(b, ids, workers, nil)
}

// RecordedFloor is Floor with the least that a claim must do beyond its
// rename, done by hand with the fewest system calls: the winner reads the
// claimed file (a claim returns the session) and appends one line to a
// log kept open for the whole drain, under flock(2) as every writer of
// the event log takes it (a claim is recorded in the history). It tells
// how much of the library's distance to Floor is that work, and how much
// is the library's own.
func RecordedFloor(b *sessions.Board, ids []string, workers int) (Result, error) {
	log, err := os.OpenFile(filepath.Join(b.Dir, "floor-events.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return Result{}, err
	}
	defer log.Close()
	fd := int(log.Fd())
	buf := make([][]byte, workers)
	return floor(b, ids, workers, func(w int, to string) error {
		data, err := os.ReadFile(to)
		if err != nil {
			return err
		}
		buf[w] = fmt.Appendf(buf[w][:0], "{\"op\":\"claim\",\"owner\":\"g%d\",\"bytes\":%d}\n", w, len(data))
		if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
			return err
		}
		_, err = log.Write(buf[w])
		if uerr := syscall.Flock(fd, syscall.LOCK_UN); err == nil {
			err = uerr
		}
		return err
	})
}

// floor races the renames; won, if set, runs in worker w after each
// rename it won, to path to, inside the clock.
func floor(b *sessions.Board, ids []string, workers int, won func(w int, to string) error) (Result, error) {
	todo := b.StateDir(sessions.Todo, "")
	src := make([]string, len(ids))
	for i, id := range ids {
		src[i] = filepath.Join(todo, id+".md")
	}
	dst := make([]string, workers)
	for w := range dst {
		dst[w] = b.StateDir(sessions.Doing, fmt.Sprintf("g%d", w))
		if err := os.MkdirAll(dst[w], 0o755); err != nil {
			return Result{}, err
		}
	}
	counts := make([]int, workers)
	errs := make([]error, workers)
	start := make(chan struct{})
	var ready, done sync.WaitGroup
	for w := 0; w < workers; w++ {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			// Join the destination paths before the clock starts.
			to := make([]string, len(ids))
			for i, id := range ids {
				to[i] = filepath.Join(dst[w], id+".md")
			}
			ready.Done()
			<-start
			for i := range src {
				err := syscall.Rename(src[i], to[i])
				switch err {
				case nil:
					counts[w]++
					if won != nil {
						if err := won(w, to[i]); err != nil {
							errs[w] = err
							return
						}
					}
				case syscall.ENOENT:
				default:
					errs[w] = &os.LinkError{Op: "rename", Old: src[i], New: to[i], Err: err}
					return
				}
			}
		}()
	}
	ready.Wait()
	cpu0, t0 := benchkit.CPUTime(), time.Now()
	close(start)
	done.Wait()
	d := Result{N: len(ids), Elapsed: time.Since(t0), CPU: benchkit.CPUTime() - cpu0}
	for _, c := range counts {
		d.Claims += c
	}
	if err := errors.Join(errs...); err != nil {
		return d, err
	}
	if d.Claims != d.N {
		return d, fmt.Errorf("floor: %d renames won for %d files", d.Claims, d.N)
	}
	return d, nil
}

// Library drains todo/ through the library: workers goroutines, each
// with its own claim.Client (owner w<N>), loop Next until
// claim.ErrNothingAvailable. With snapshot > 0 each uses a claim.Queue with
// NextOptions{Snapshot: snapshot}; with snapshot 0 it calls Client.Next,
// which lists todo/ on every call. Clients and queues are made before the
// clock starts; everything Next does (listing included) is timed. It then
// checks that every session was claimed exactly once and todo/ is empty.
func Library(ctx context.Context, b *sessions.Board, workers int, snapshot time.Duration) (Result, error) {
	return library(ctx, b, workers, snapshot, false)
}

// Shared is Library with one claim.Client (owner w) and one claim.Queue
// that all the goroutines share, as the workers of a pool do: todo/ is
// listed once between them and each candidate goes to one of them.
func Shared(ctx context.Context, b *sessions.Board, workers int, snapshot time.Duration) (Result, error) {
	return library(ctx, b, workers, snapshot, true)
}

func library(ctx context.Context, b *sessions.Board, workers int, snapshot time.Duration, shared bool) (Result, error) {
	before, err := b.ListState(sessions.Todo, false)
	if err != nil {
		return Result{}, err
	}
	claimed := make([][]string, workers)
	errs := make([]error, workers)
	next := make([]func() (sessions.Session, error), workers)
	var sharedQueue *claim.Queue
	if shared {
		c, err := claim.New(b, "w")
		if err != nil {
			return Result{}, err
		}
		sharedQueue = c.NewQueue(claim.NextOptions{Snapshot: snapshot})
	}
	for w := range next {
		c, err := claim.New(b, fmt.Sprintf("w%d", w))
		if err != nil {
			return Result{}, err
		}
		switch {
		case shared:
			next[w] = func() (sessions.Session, error) { return sharedQueue.Next(ctx) }
		case snapshot > 0:
			q := c.NewQueue(claim.NextOptions{Snapshot: snapshot})
			next[w] = func() (sessions.Session, error) { return q.Next(ctx) }
		default:
			next[w] = func() (sessions.Session, error) { return c.Next(ctx) }
		}
		claimed[w] = make([]string, 0, len(before)/workers*2)
	}
	start := make(chan struct{})
	var ready, done sync.WaitGroup
	for w := 0; w < workers; w++ {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			for {
				s, err := next[w]()
				if errors.Is(err, claim.ErrNothingAvailable) {
					return
				}
				if err != nil {
					errs[w] = err
					return
				}
				claimed[w] = append(claimed[w], s.ID)
			}
		}()
	}
	ready.Wait()
	cpu0, t0 := benchkit.CPUTime(), time.Now()
	close(start)
	done.Wait()
	d := Result{N: len(before), Elapsed: time.Since(t0), CPU: benchkit.CPUTime() - cpu0}
	if err := errors.Join(errs...); err != nil {
		return d, err
	}
	seen := make(map[string]bool, len(before))
	for _, ids := range claimed {
		for _, id := range ids {
			if seen[id] {
				return d, fmt.Errorf("session %s claimed twice", id)
			}
			seen[id] = true
		}
		d.Claims += len(ids)
	}
	if d.Claims != d.N {
		return d, fmt.Errorf("%d claims for %d sessions", d.Claims, d.N)
	}
	if left, err := b.ListState(sessions.Todo, false); err != nil || len(left) > 0 {
		return d, fmt.Errorf("todo/ still holds %d sessions after the drain (%v)", len(left), err)
	}
	return d, nil
}
