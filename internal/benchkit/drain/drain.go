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
	"golang.org/x/sys/unix"
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
	return FloorWith(b, ids, workers, Work{})
}

// Work is what a floor does beyond its renames: the steps that a claim
// through the library takes besides the rename, each done by hand with
// the fewest system calls, so that a ladder of floors tells what each
// step costs and how much of the library's distance to Floor is its own.
type Work struct {
	// Line appends one line of history per claim won to a log kept open
	// for the whole drain (O_APPEND, one write(2), as the board's event
	// log appends where the filesystem makes that atomic).
	Line bool
	// Guard holds the board's move guard over each rename and its line,
	// as every move does: open .pickup/moves.lock, flock(2) it shared,
	// lock the byte that orders the session's moves (an OFD lock), and
	// close it after the line.
	Guard bool
	// Fresh lstat(2)s each listed file before trying it, as a claim checks
	// that the listing it chose from still holds (a file edited since
	// goes back in order), and skips a file that is gone.
	Fresh bool
}

func (w Work) String() string {
	switch w {
	case Work{}:
		return "rename"
	case Work{Line: true}:
		return "rename, a history line"
	case Work{Line: true, Guard: true}:
		return "rename, a history line, the move guard"
	case Work{Line: true, Guard: true, Fresh: true}:
		return "rename, a history line, the move guard, the freshness check"
	}
	return fmt.Sprintf("rename, line %t, guard %t, fresh %t", w.Line, w.Guard, w.Fresh)
}

// guardFile and guardBytes are sessions' move guard (sessions/moveguard.go):
// its file in the board's runtime folder and how many bytes order moves.
const (
	guardFile  = "moves.lock"
	guardBytes = 4096
)

// guardByte is the byte of the guard file that orders id's moves, as
// sessions picks it (FNV-1a of the id).
func guardByte(id string) int64 {
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint32(id[i])) * 16777619
	}
	return int64(h % guardBytes)
}

// FloorWith is Floor doing w besides the renames (see Work).
func FloorWith(b *sessions.Board, ids []string, workers int, w Work) (Result, error) {
	var log *os.File
	if w.Line {
		var err error
		log, err = os.OpenFile(filepath.Join(b.Dir, "floor-events.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return Result{}, err
		}
		defer log.Close()
	}
	guard := filepath.Join(b.RuntimeDir(), guardFile)
	if w.Guard {
		if err := os.MkdirAll(b.RuntimeDir(), 0o755); err != nil {
			return Result{}, err
		}
	}
	buf := make([][]byte, workers)
	return floor(b, ids, workers, func(g int, id, from, to string) (bool, error) {
		if w.Fresh {
			var st unix.Stat_t
			if err := unix.Lstat(from, &st); err == unix.ENOENT {
				return false, nil
			} else if err != nil {
				return false, &os.PathError{Op: "lstat", Path: from, Err: err}
			}
		}
		fd := -1
		if w.Guard {
			var err error
			if fd, err = unix.Open(guard, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644); err != nil {
				return false, &os.PathError{Op: "open", Path: guard, Err: err}
			}
			defer unix.Close(fd)
			if err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB); err != nil {
				return false, &os.PathError{Op: "flock", Path: guard, Err: err}
			}
			if err := lockByte(fd, guardByte(id)); err != nil {
				return false, &os.PathError{Op: "lock a byte of", Path: guard, Err: err}
			}
		}
		if err := syscall.Rename(from, to); err == syscall.ENOENT {
			return false, nil
		} else if err != nil {
			return false, &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
		if w.Line {
			buf[g] = fmt.Appendf(buf[g][:0], "{\"id\":%q,\"op\":\"next\",\"from\":\"todo\",\"to\":\"doing\",\"owner\":\"g%d\"}\n", id, g)
			if _, err := log.Write(buf[g]); err != nil {
				return true, err
			}
		}
		return true, nil
	})
}

// floor races the claims: worker g calls claim for each session in the
// list's order, inside the clock; claim says whether it won the session,
// and a false with no error is a race lost (the file gone).
func floor(b *sessions.Board, ids []string, workers int, claim func(g int, id, from, to string) (bool, error)) (Result, error) {
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
				won, err := claim(w, ids[i], src[i], to[i])
				if won {
					counts[w]++
				}
				if err != nil {
					errs[w] = err
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
