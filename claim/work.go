package claim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
)

// WorkEvent is one thing a Pool did, for logs and --json streams.
type WorkEvent struct {
	Time    time.Time `json:"time"`
	Event   string    `json:"event"` // claimed, done, failed, released, set_aside, lost
	ID      string    `json:"id"`
	Worker  int       `json:"worker"`
	Attempt int       `json:"attempt,omitempty"`
	Error   string    `json:"error,omitempty"`
}

// WorkSummary counts what a Pool did.
type WorkSummary struct {
	Claimed  int `json:"claimed"`
	Done     int `json:"done"`
	Failed   int `json:"failed"`    // runs that failed (each also counted as an attempt)
	SetAside int `json:"set_aside"` // sessions moved to failed/
	Released int `json:"released"`  // unfinished sessions returned when stopped
	Lost     int `json:"lost"`      // claims reaped while running
}

// Pool runs a function for sessions, Jobs at a time: each worker claims the
// next session, runs it, and moves it on: done when Run succeeds, back to
// todo/ with the attempt counted when it fails, to failed/ after
// MaxAttempts failures. Every transition is durable (unless the board is
// NoSync) before it is reported and before Run is called for a claimed
// session; the workers share the fsyncs that take, and a worker's done and
// its next claim are made durable together.
type Pool struct {
	Client      *Client
	Jobs        int
	MaxAttempts int // 0: retry forever
	// Wait keeps the pool serving new sessions; without it the pool stops
	// when nothing is available.
	Wait bool
	// Until, if set, ends waiting at that time: no claim after it, but
	// runs in progress finish (only stop cancels them).
	Until time.Time
	// Filter, if not empty, limits the pool to the sessions it matches
	// (see NextOptions.Filter): every claim of every worker, and waiting.
	Filter sessions.TagFilter
	// Run works on one session. It may finish or release the session
	// itself (as the pool's owner): the pool then reports that (done,
	// released) and leaves the session where Run put it, whatever Run
	// returns; a session Run released is not claimed again by this pool. ctx is cancelled when the pool is told to
	// stop; the session then goes back to todo/ uncounted. An error that
	// wraps ErrNotStarted says the work could not even start: the session
	// goes back uncounted too, and the pool stops (see ErrNotStarted).
	Run func(ctx context.Context, worker int, s sessions.Session) error
	// Event, if set, is called for every event (from several goroutines,
	// one at a time).
	Event func(WorkEvent)

	// queue is Serve's, for Waiting.
	queue atomic.Pointer[Queue]
	// gaveBack, set by Serve, records a session that a run released.
	gaveBack func(id string)
}

// Serve runs the pool until nothing is left (or, with Wait, until stop is
// cancelled). Cancelling stop stops claiming and cancels every running Run
// (whose session is released back to todo/ once Run returns). A Run error
// that wraps ErrNotStarted stops claiming too, and Serve returns it.
func (p *Pool) Serve(stop context.Context) (WorkSummary, error) {
	jobs := max(p.Jobs, 1)
	var (
		mu      sync.Mutex
		sum     WorkSummary
		firstEr error
	)
	// emitAfter runs do and reports the event pick makes of its outcome
	// with no other event in between: a failed session that do moves back
	// to todo/ cannot be reported claimed by another worker before its
	// failure is reported.
	emitAfter := func(do func() error, pick func(error) (WorkEvent, func(*WorkSummary))) {
		mu.Lock()
		defer mu.Unlock()
		ev, count := pick(do())
		ev.Time = time.Now().UTC()
		count(&sum)
		if p.Event != nil {
			p.Event(ev)
		}
	}
	emit := func(ev WorkEvent, count func(*WorkSummary)) {
		emitAfter(func() error { return nil }, func(error) (WorkEvent, func(*WorkSummary)) { return ev, count })
	}
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstEr == nil {
			firstEr = err
		}
	}
	// One queue for all workers: they list todo/ once between them, and
	// no two of them try the same candidate.
	// A session that a run released itself is not claimed again by this
	// pool: the command gave it back (not its work, or not now), and
	// taking it again would run it again and again.
	var (
		gaveMu sync.Mutex
		gave   = map[string]bool{}
	)
	skip := func(id string) bool {
		gaveMu.Lock()
		defer gaveMu.Unlock()
		return gave[id]
	}
	p.gaveBack = func(id string) {
		gaveMu.Lock()
		gave[id] = true
		gaveMu.Unlock()
	}
	q := p.Client.NewQueue(NextOptions{Snapshot: time.Second, Filter: p.Filter, Skip: skip})
	p.queue.Store(q)
	h := newHalting(stop)
	defer h.cancel()
	// A pool that waits on a shared board keeps it in line with its
	// arbiter once for every worker (a fetch loop, a LISTEN), not once per
	// waiting worker, so that sessions made or released elsewhere land in
	// todo/, where the workers' watch sees them.
	if a := p.Client.arbiterOf(); p.Wait && a.Where() != "" {
		if err := p.Client.ready(h.ctx, a, false); err != nil {
			return sum, err
		}
		defer a.Watch(h.ctx, p.Client.warned())()
		q.inLine = true
	}
	var wg sync.WaitGroup
	for w := 1; w <= jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.worker(stop, h, w, q, emit, emitAfter); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	if err := h.reason(); err != nil {
		return sum, err // why the pool stopped early comes first
	}
	return sum, firstEr
}

// worker claims and runs sessions until nothing is left, stop is
// cancelled, or the pool halts (h): stop cancels the runs, halting only
// the claims.
func (p *Pool) worker(stop context.Context, h *halting, w int, q *Queue, emit func(WorkEvent, func(*WorkSummary)),
	emitAfter func(func() error, func(error) (WorkEvent, func(*WorkSummary)))) error {
	c := p.Client
	claiming := h.ctx
	if !p.Until.IsZero() {
		var cancel context.CancelFunc
		claiming, cancel = context.WithDeadline(h.ctx, p.Until)
		defer cancel()
	}
	// A run that succeeded leaves its session renamed into done/ but not
	// yet committed: the next claim's rename comes first, so that the two
	// transitions share their fsyncs (doing/<owner>/ and the event log).
	// The done is reported once it is durable, and the next command starts
	// once its claim is, as if each were committed on its own.
	var finished *finishedRun
	reportDone := func(d finishedRun, err error) {
		if err != nil {
			emit(WorkEvent{Event: "lost", ID: d.s.ID, Worker: w, Error: err.Error()}, func(x *WorkSummary) { x.Lost++ })
			return
		}
		emit(WorkEvent{Event: "done", ID: d.s.ID, Worker: w, Attempt: d.s.Attempts + 1}, func(x *WorkSummary) { x.Done++ })
	}
	for {
		if claiming.Err() != nil {
			if finished != nil {
				reportDone(*finished, c.commit(finished.m))
			}
			return nil
		}
		var s sessions.Session
		var err error
		switch {
		case finished != nil:
			d := *finished
			finished = nil
			var m moved
			if s, m, err = q.claim(h.ctx); err == nil {
				errs := c.commitEach(d.m, m)
				reportDone(d, errs[0])
				err = errs[1]
				break
			}
			// Nothing to share the fsyncs with.
			reportDone(d, c.commit(d.m))
			if p.Wait && errors.Is(err, ErrNothingAvailable) && claiming.Err() == nil {
				s, err = q.Wait(claiming, WaitOptions{})
			}
		case p.Wait:
			s, err = q.Wait(claiming, WaitOptions{})
		default:
			s, err = q.Next(h.ctx)
		}
		if lostAtArbiter(err) {
			continue // a shared board's remote gave it to another
		}
		if errors.Is(err, ErrNothingAvailable) || h.ctx.Err() != nil {
			if err == nil {
				_, _ = c.Release(context.Background(), s.ID) // claimed just as we were told to stop
			}
			return nil
		}
		if err != nil {
			return err
		}
		// The listing that found s was made before the claim: another
		// worker may have run, failed and released it since, counting an
		// attempt. Next checked it just before the claim; the session is
		// ours now: check once more, and read it again if it changed.
		if fresh, err := c.Board.Refresh(s); err == nil {
			s = fresh
		}
		emit(WorkEvent{Event: "claimed", ID: s.ID, Worker: w, Attempt: s.Attempts + 1}, func(x *WorkSummary) { x.Claimed++ })
		runErr := p.Run(stop, w, s)
		if errors.Is(runErr, ErrNotStarted) {
			// Not the session's doing: back to todo/ as it was, and
			// no more claims, by any worker.
			h.halt(runErr)
			if _, err := c.Release(context.Background(), s.ID); err != nil {
				emit(WorkEvent{Event: "lost", ID: s.ID, Worker: w, Error: err.Error()}, func(x *WorkSummary) { x.Lost++ })
				return nil
			}
			emit(WorkEvent{Event: "released", ID: s.ID, Worker: w, Error: runErr.Error()}, func(x *WorkSummary) { x.Released++ })
			return nil
		}
		// The command may have finished or released its session itself:
		// that is its outcome, whatever its exit status, and the session
		// stays where the command put it.
		if ev, settled, err := c.settledByRun(s.ID); settled {
			e := WorkEvent{Event: ev, ID: s.ID, Worker: w, Attempt: s.Attempts + 1}
			count := func(x *WorkSummary) { x.Lost++ }
			switch ev {
			case "done":
				count = func(x *WorkSummary) { x.Done++ }
			case "released":
				count = func(x *WorkSummary) { x.Released++ }
				p.gaveBack(s.ID)
			}
			if err != nil {
				e.Error = err.Error()
			}
			emit(e, count)
			if stop.Err() != nil {
				return nil
			}
			continue
		}
		if stop.Err() != nil {
			if _, err := c.Release(context.Background(), s.ID); err != nil {
				emit(WorkEvent{Event: "lost", ID: s.ID, Worker: w, Error: err.Error()}, func(x *WorkSummary) { x.Lost++ })
				return nil
			}
			emit(WorkEvent{Event: "released", ID: s.ID, Worker: w}, func(x *WorkSummary) { x.Released++ })
			return nil
		}
		if runErr == nil {
			// Nothing reads the finished session: it is not read back.
			m, err := c.shift("done", s.ID, sessions.Doing, c.Owner, sessions.Done, "")
			if err != nil {
				emit(WorkEvent{Event: "lost", ID: s.ID, Worker: w, Error: err.Error()}, func(x *WorkSummary) { x.Lost++ })
				continue
			}
			finished = &finishedRun{s: s, m: m}
			continue
		}
		attempt := s.Attempts + 1
		setAside := p.MaxAttempts > 0 && attempt >= p.MaxAttempts
		emitAfter(func() error { return c.recordFailure(s.ID, attempt, runErr, setAside) },
			func(err error) (WorkEvent, func(*WorkSummary)) {
				switch {
				case err != nil:
					return WorkEvent{Event: "lost", ID: s.ID, Worker: w, Attempt: attempt, Error: err.Error()}, func(x *WorkSummary) { x.Failed++; x.Lost++ }
				case setAside:
					return WorkEvent{Event: "set_aside", ID: s.ID, Worker: w, Attempt: attempt, Error: runErr.Error()}, func(x *WorkSummary) { x.Failed++; x.SetAside++ }
				}
				return WorkEvent{Event: "failed", ID: s.ID, Worker: w, Attempt: attempt, Error: runErr.Error()}, func(x *WorkSummary) { x.Failed++ }
			})
	}
}

// finishedRun is a session whose run succeeded, renamed into done/ and
// waiting to be committed.
type finishedRun struct {
	s sessions.Session
	m moved
}

// recordFailure writes the attempt count and the error into the claimed
// session, then moves it back to todo/, or to failed/ when setAside. The
// rewrite replaces the file only while it is still in doing/<owner>/, so a
// session reaped meanwhile is never resurrected here.
func (c *Client) recordFailure(id string, attempt int, runErr error, setAside bool) error {
	path := c.Board.Path(sessions.Doing, c.Owner, id)
	if err := c.setFields(path, map[string]string{
		"attempts":   strconv.Itoa(attempt),
		"last_error": strconv.Quote(fmt.Sprintf("%s (attempt %d)", runErr, attempt)),
	}); err != nil {
		return &Error{Op: "release", ID: id, From: path, Err: err}
	}
	to := c.Board.Path(sessions.Todo, "", id)
	op := "release"
	if setAside {
		op = "set aside"
		to = c.Board.Path(sessions.Failed, "", id)
	}
	return c.move(op, id, path, to, true)
}

func (c *Client) setFields(path string, fields map[string]string) error {
	content, err := fsx.ReadRegular(path)
	if err != nil {
		return err
	}
	for _, k := range []string{"attempts", "last_error"} {
		if v, ok := fields[k]; ok {
			if content, err = sessions.SetField(content, k, v); err != nil {
				return err
			}
		}
	}
	// A rewrite is a move of the session file (a fresh file takes its
	// name): not while a repair looks at the board (see EnterMove).
	leave, err := c.Board.EnterMove()
	if err != nil {
		return err
	}
	defer leave()
	return fsx.ReplaceExisting(path, content, 0o644, !c.Board.NoSync)
}

// Requeue moves a set-aside session from failed/ back to todo/ with its
// attempt count reset, so that next takes it again.
func (c *Client) Requeue(ctx context.Context, id string) (sessions.Session, error) {
	if err := sessions.ValidateID(id); err != nil {
		return sessions.Session{}, &Error{Op: "requeue", ID: id, Err: err}
	}
	return c.arbitrated(ctx, func() (sessions.Session, error) {
		src := c.Board.Path(sessions.Failed, "", id)
		if err := c.setFields(src, map[string]string{"attempts": "0"}); err != nil && !errors.Is(err, os.ErrNotExist) {
			return sessions.Session{}, &Error{Op: "requeue", ID: id, From: src, Err: err}
		}
		if err := c.move("requeue", id, src, c.Board.Path(sessions.Todo, "", id), true); err != nil {
			return sessions.Session{}, err
		}
		return c.read(sessions.Todo, "", id)
	}, ErrSessionNotFound, ErrSessionNotAvailable)
}
