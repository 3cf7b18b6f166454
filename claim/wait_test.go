package claim_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sync/errgroup"
)

// waNever is a safety rescan long enough never to fire during a test: a
// waiter that claims anything then did it because of an event.
const waNever = time.Hour

// waPatience bounds how long a test waits for something that should happen
// at once; it only keeps a broken waiter from hanging the test.
const waPatience = 30 * time.Second

// waSpy wraps a notifier and reports each time the waiter goes to sleep:
// Wait evaluates Events() at the top of its select, which it only reaches
// after a look at the board found nothing to claim.
type waSpy struct {
	claim.Notifier
	asleep chan struct{}
}

func (s *waSpy) Events() <-chan fsnotify.Event {
	select {
	case s.asleep <- struct{}{}:
	default:
	}
	return s.Notifier.Events()
}

// waFake is a notifier that delivers only what the test sends it.
type waFake struct {
	events chan fsnotify.Event
	errors chan error
	closed atomic.Bool
}

func newWAFake() *waFake {
	return &waFake{events: make(chan fsnotify.Event), errors: make(chan error)}
}

func (f *waFake) Events() <-chan fsnotify.Event { return f.events }
func (f *waFake) Errors() <-chan error          { return f.errors }
func (f *waFake) Close() error                  { f.closed.Store(true); return nil }

type waResult struct {
	s   sessions.Session
	err error
}

// waStart runs one Wait in the background.
func waStart(ctx context.Context, q *claim.Queue, opts claim.WaitOptions) <-chan waResult {
	out := make(chan waResult, 1)
	go func() {
		s, err := q.Wait(ctx, opts)
		out <- waResult{s, err}
	}()
	return out
}

// waAsleep waits until the spy says the waiter sleeps, failing the test if
// it returns first or never gets there.
func waAsleep(t *testing.T, asleep <-chan struct{}, res <-chan waResult) {
	t.Helper()
	select {
	case <-asleep:
	case r := <-res:
		t.Fatalf("Wait returned before anything was there to claim: %+v, %v", r.s, r.err)
	case <-time.After(waPatience):
		t.Fatal("the waiter never went to sleep")
	}
}

// waClaimed checks that Wait claimed want for owner, and that the board
// agrees.
func waClaimed(t *testing.T, b *sessions.Board, r waResult, owner, want string) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("Wait = %v, want it to claim %s", r.err, want)
	}
	if r.s.ID != want || r.s.State != sessions.Doing || r.s.Owner != owner {
		t.Fatalf("Wait claimed %s (%s, owner %q), want %s in doing/%s", r.s.ID, r.s.State, r.s.Owner, want, owner)
	}
	if got := pkWhere(t, b, want); got != "doing/"+owner {
		t.Fatalf("%s is in %s after Wait, want doing/%s", want, got, owner)
	}
}

// TestWaitWakesUp: a waiter that found nothing claims the session that
// becomes claimable, and only through the event: the safety rescan is an
// hour away.
func TestWaitWakesUp(t *testing.T) {
	dep := func(ids ...string) sessions.Meta { return sessions.Meta{DependsOn: ids} }
	tests := []struct {
		name  string
		setup func(t *testing.T, b *sessions.Board, other *claim.Client)
		// act makes a session claimable once the waiter sleeps; it returns
		// the id the waiter must claim.
		act func(t *testing.T, b *sessions.Board, other *claim.Client) string
	}{
		{
			name: "new session (Board.Create)",
			act: func(t *testing.T, b *sessions.Board, _ *claim.Client) string {
				s, err := b.Create(sessions.Meta{Title: "fresh"}, []byte("body\n"))
				if err != nil {
					t.Fatal(err)
				}
				return s.ID
			},
		},
		{
			name: "session file written in place by hand",
			act: func(t *testing.T, b *sessions.Board, _ *claim.Client) string {
				pkPut(t, b, sessions.Todo, "", "hand", sessions.Meta{})
				return "hand"
			},
		},
		{
			name: "release",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				pkPut(t, b, sessions.Doing, "other", "x", sessions.Meta{})
			},
			act: func(t *testing.T, _ *sessions.Board, other *claim.Client) string {
				if _, err := other.Release("x"); err != nil {
					t.Fatal(err)
				}
				return "x"
			},
		},
		{
			name: "reopen",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				pkPut(t, b, sessions.Done, "", "x", sessions.Meta{})
			},
			act: func(t *testing.T, _ *sessions.Board, other *claim.Client) string {
				if _, err := other.Reopen("x"); err != nil {
					t.Fatal(err)
				}
				return "x"
			},
		},
		{
			name: "requeue from failed",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				pkPut(t, b, sessions.Failed, "", "x", sessions.Meta{Attempts: 3})
			},
			act: func(t *testing.T, _ *sessions.Board, other *claim.Client) string {
				if _, err := other.Requeue("x"); err != nil {
					t.Fatal(err)
				}
				return "x"
			},
		},
		{
			name: "reap of a dead owner by someone else",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				// No lease and a fresh claim: nobody may reap it yet.
				pkPut(t, b, sessions.Doing, "gone", "x", sessions.Meta{})
			},
			act: func(t *testing.T, b *sessions.Board, _ *claim.Client) string {
				l := &claim.Leases{Board: &sessions.Board{Dir: b.Dir, NoSync: true}}
				if _, err := l.Register("gone", deadProcess(t)); err != nil {
					t.Fatal(err)
				}
				if r, err := l.Reap(claim.ReapOptions{OnlyDead: true}); err != nil || len(r) != 1 {
					t.Fatalf("Reap = %+v, %v; want x reaped", r, err)
				}
				return "x"
			},
		},
		{
			name: "its only dependency finishes",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				pkPut(t, b, sessions.Doing, "other", "a", sessions.Meta{})
				pkPut(t, b, sessions.Todo, "", "b", dep("a"))
			},
			act: func(t *testing.T, _ *sessions.Board, other *claim.Client) string {
				if _, err := other.Done("a"); err != nil {
					t.Fatal(err)
				}
				return "b"
			},
		},
		{
			name: "the last of two dependencies finishes",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				pkPut(t, b, sessions.Done, "", "a1", sessions.Meta{})
				pkPut(t, b, sessions.Doing, "other", "a2", sessions.Meta{})
				pkPut(t, b, sessions.Todo, "", "b", dep("a1", "a2"))
			},
			act: func(t *testing.T, _ *sessions.Board, other *claim.Client) string {
				if _, err := other.Done("a2"); err != nil {
					t.Fatal(err)
				}
				return "b"
			},
		},
		{
			name: "two unblocked at once: the best by priority",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				pkPut(t, b, sessions.Doing, "other", "a", sessions.Meta{})
				pkPut(t, b, sessions.Todo, "", "b-low", sessions.Meta{Priority: sessions.Low, DependsOn: []string{"a"}})
				pkPut(t, b, sessions.Todo, "", "c-high", sessions.Meta{Priority: sessions.High, DependsOn: []string{"a"}})
			},
			act: func(t *testing.T, _ *sessions.Board, other *claim.Client) string {
				if _, err := other.Done("a"); err != nil {
					t.Fatal(err)
				}
				return "c-high"
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			other := pkClient(t, pkOwnBoard(b), "other")
			if tt.setup != nil {
				tt.setup(t, b, other)
			}
			asleep := make(chan struct{}, 1)
			opts := claim.WaitOptionsWith(waNever, func(dirs ...string) (claim.Notifier, error) {
				n, err := claim.NewFSWatcher(dirs...)
				if err != nil {
					return nil, err
				}
				return &waSpy{Notifier: n, asleep: asleep}, nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), waPatience)
			defer cancel()
			q := pkClient(t, pkOwnBoard(b), "waiter").NewQueue(claim.NextOptions{})
			res := waStart(ctx, q, opts)
			waAsleep(t, asleep, res)
			want := tt.act(t, b, other)
			waClaimed(t, b, <-res, "waiter", want)
		})
	}
}

// TestWaitLostEvents: with a notifier that never delivers the event of a
// new session, the waiter still claims it: at once on an overflow or a
// watcher error, and within the safety rescan when nothing is delivered.
func TestWaitLostEvents(t *testing.T) {
	tests := []struct {
		name    string
		rescan  time.Duration
		deliver error // sent on Errors after the session is in todo/; nil: nothing
	}{
		{name: "event queue overflow", rescan: waNever, deliver: fsnotify.ErrEventOverflow},
		{name: "watcher error", rescan: waNever, deliver: errors.New("read inotify: input/output error")},
		{name: "nothing delivered: the safety rescan", rescan: 50 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			fake := newWAFake()
			asleep := make(chan struct{}, 1)
			var dirs []string
			opts := claim.WaitOptionsWith(tt.rescan, func(d ...string) (claim.Notifier, error) {
				dirs = d
				return &waSpy{Notifier: fake, asleep: asleep}, nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), waPatience)
			defer cancel()
			q := pkClient(t, pkOwnBoard(b), "waiter").NewQueue(claim.NextOptions{})
			res := waStart(ctx, q, opts)
			waAsleep(t, asleep, res)
			pkPut(t, b, sessions.Todo, "", "x", sessions.Meta{})
			if tt.deliver != nil {
				select {
				case fake.errors <- tt.deliver:
				case r := <-res:
					t.Fatalf("Wait returned before the error was delivered: %+v, %v", r.s, r.err)
				}
			}
			waClaimed(t, b, <-res, "waiter", "x")
			if !fake.closed.Load() {
				t.Error("Wait did not close its notifier")
			}
			if want := []string{b.StateDir(sessions.Todo, ""), b.StateDir(sessions.Done, "")}; !slices.Equal(dirs, want) {
				t.Errorf("Wait watched %q, want %q", dirs, want)
			}
		})
	}
}

// TestWaitWatchesBeforeItLooks: the notifier exists before the first look
// at todo/, so that nothing arriving in between goes unseen.
func TestWaitWatchesBeforeItLooks(t *testing.T) {
	b := pkBoard(t)
	b.NoSync = true
	pkPut(t, b, sessions.Todo, "", "x", sessions.Meta{})
	var inTodo atomic.Bool
	opts := claim.WaitOptionsWith(waNever, func(d ...string) (claim.Notifier, error) {
		_, err := os.Lstat(b.Path(sessions.Todo, "", "x"))
		inTodo.Store(err == nil)
		return newWAFake(), nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), waPatience)
	defer cancel()
	s, err := pkClient(t, pkOwnBoard(b), "waiter").NewQueue(claim.NextOptions{}).Wait(ctx, opts)
	waClaimed(t, b, waResult{s, err}, "waiter", "x")
	if !inTodo.Load() {
		t.Error("the notifier was made after the session was claimed: Wait looked before it watched")
	}
}

// TestWaitClosedNotifier: a notifier whose Events channel closes ends Wait
// with an error, not a hang and not "nothing available".
func TestWaitClosedNotifier(t *testing.T) {
	b := pkBoard(t)
	fake := newWAFake()
	close(fake.events)
	opts := claim.WaitOptionsWith(waNever, func(...string) (claim.Notifier, error) { return fake, nil })
	ctx, cancel := context.WithTimeout(context.Background(), waPatience)
	defer cancel()
	_, err := pkClient(t, b, "waiter").NewQueue(claim.NextOptions{}).Wait(ctx, opts)
	if err == nil || errors.Is(err, claim.ErrNothingAvailable) {
		t.Fatalf("Wait with a closed notifier = %v, want a watcher error", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("Wait returned only at the deadline: %v", err)
	}
}

// TestWaitTimeout: at the context's deadline Wait reports ErrNothingAvailable
// and leaves the board as it was.
func TestWaitTimeout(t *testing.T) {
	tests := []struct {
		name    string
		place   map[string]sessions.State // id -> state (doing: owner "other")
		blocked bool                      // the error tells of sessions waiting on dependencies
	}{
		{name: "empty board"},
		{name: "everything claimed or done", place: map[string]sessions.State{"a": sessions.Doing, "b": sessions.Done}},
		{name: "set aside in failed/", place: map[string]sessions.State{"a": sessions.Failed}},
		{name: "todo waits on an unfinished dependency", place: map[string]sessions.State{"a": sessions.Doing, "b": sessions.Todo}, blocked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			for id, st := range tt.place {
				var m sessions.Meta
				owner := ""
				if st == sessions.Doing {
					owner = "other"
				}
				if st == sessions.Todo {
					m.DependsOn = []string{"a"}
				}
				pkPut(t, b, st, owner, id, m)
			}
			before, err := pkWalk(b)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			s, err := pkClient(t, pkOwnBoard(b), "waiter").NewQueue(claim.NextOptions{}).Wait(ctx, claim.WaitOptions{})
			if !errors.Is(err, claim.ErrNothingAvailable) {
				t.Fatalf("Wait = %+v, %v; want ErrNothingAvailable", s, err)
			}
			if got := strings.Contains(err.Error(), "dependencies"); got != tt.blocked {
				t.Errorf("error %q mentions dependencies: %v, want %v", err, got, tt.blocked)
			}
			after, err := pkWalk(b)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(before) != fmt.Sprint(after) {
				t.Errorf("the board changed: %v, was %v", after, before)
			}
		})
	}
}

// TestWaitBurst: sessions created in a burst (Board.Create, NoSync) while
// 4 waiters wait, each its own Client and Queue calling Wait in a loop:
// every session is claimed exactly once. The safety rescan is an hour, so
// the waiters live on events and on the rescans that overflows and
// "nothing available" listings cause.
func TestWaitBurst(t *testing.T) {
	tests := []struct {
		name     string
		sessions int
		snapshot time.Duration // the waiters' NextOptions.Snapshot
	}{
		// work --wait: a Queue with a snapshot, invalidated by events.
		{name: "10000 sessions, 1s snapshot", sessions: 10000, snapshot: time.Second},
		// next --wait: every Next lists todo/ (and its cache) again, so a
		// claim costs O(backlog): 10,000 this way took 140 s without -race
		// and did not finish in 3 minutes with it. 1,000 keep it short.
		{name: "1000 sessions, no snapshot", sessions: 1000},
	}
	const waiters = 4
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.sessions
			if testing.Short() {
				n = min(n, 1000)
			}
			b := pkBoard(t)
			b.NoSync = true
			// The creator's clock moves one second per session, so that each
			// id is a plain timestamp (Create tries suffixes in order within
			// one second).
			var tick atomic.Int64
			epoch := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			creator := &sessions.Board{Dir: b.Dir, NoSync: true, Now: func() time.Time {
				return epoch.Add(time.Duration(tick.Add(1)) * time.Second)
			}}
			// The test ends when everything is claimed, or at the deadline.
			all, allClaimed := context.WithTimeout(context.Background(), 3*time.Minute)
			defer allClaimed()
			var claimed atomic.Int64
			created := make([]string, 0, n)
			wins := make([][]string, waiters)
			t0 := time.Now()
			var g errgroup.Group
			g.Go(func() error {
				for i := 0; i < n; i++ {
					s, err := creator.Create(sessions.Meta{Title: fmt.Sprintf("burst %d", i)}, nil)
					if err != nil {
						return err
					}
					created = append(created, s.ID)
				}
				return nil
			})
			for w := 0; w < waiters; w++ {
				g.Go(func() error {
					c, err := claim.New(pkOwnBoard(b), fmt.Sprintf("w%d", w))
					if err != nil {
						return err
					}
					q := c.NewQueue(claim.NextOptions{Snapshot: tt.snapshot})
					opts := claim.WaitOptions{Rescan: waNever}
					for all.Err() == nil {
						ctx, cancel := context.WithTimeout(all, 10*time.Second)
						s, err := q.Wait(ctx, opts)
						cancel()
						if errors.Is(err, claim.ErrNothingAvailable) {
							continue // the deadline or the end: the loop decides
						}
						if err != nil {
							return fmt.Errorf("waiter %d: %w", w, err)
						}
						wins[w] = append(wins[w], s.ID)
						if claimed.Add(1) == int64(n) {
							allClaimed()
						}
					}
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d sessions created and claimed by %d waiters in %s (claims per waiter: %d %d %d %d)",
				n, waiters, time.Since(t0).Round(time.Millisecond), len(wins[0]), len(wins[1]), len(wins[2]), len(wins[3]))
			if got := claimed.Load(); got != int64(n) {
				t.Fatalf("%d of %d sessions claimed before the deadline (%d created)", got, n, len(created))
			}
			byOwner := map[string][]string{}
			for w, list := range wins {
				byOwner[fmt.Sprintf("w%d", w)] = list
			}
			pkCheckClaimedOnce(t, b, created, byOwner)
		})
	}
}

// waWatching waits until process pid holds at least two inotify watches:
// `pickup next --wait` has its signal handler and its watcher, and looks or
// sleeps. It skips the test where /proc does not tell.
func waWatching(t *testing.T, pid int) {
	t.Helper()
	if _, err := os.Stat("/proc/self/fdinfo"); err != nil {
		t.Skip("no /proc/PID/fdinfo to see when the waiter watches")
	}
	deadline := time.Now().Add(waPatience)
	for time.Now().Before(deadline) {
		n := 0
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); target == "anon_inode:inotify" {
				info, _ := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
				n += strings.Count(string(info), "inotify wd:")
			}
		}
		if n >= 2 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d never watched the board", pid)
}

// TestWaitCLI runs `pickup next --wait` as a process: it claims a session
// created while it waits, exits 3 at its timeout, and 130 when interrupted
// (the exit code of an interrupt, as `pickup next` without --wait; the
// help says --wait "exits 3 only at the timeout").
func TestWaitCLI(t *testing.T) {
	tests := []struct {
		name     string
		wait     string
		act      func(t *testing.T, b *sessions.Board, p *os.Process) string // returns the id to be claimed, if any
		wantCode int
	}{
		{
			name: "a session created while it waits",
			wait: "--wait=1m",
			act: func(t *testing.T, b *sessions.Board, _ *os.Process) string {
				s, err := b.Create(sessions.Meta{Title: "for the waiter"}, nil)
				if err != nil {
					t.Fatal(err)
				}
				return s.ID
			},
		},
		{name: "timeout", wait: "--wait=300ms", wantCode: 3},
		{
			name: "SIGINT while waiting", wait: "--wait", wantCode: 130,
			act: func(t *testing.T, _ *sessions.Board, p *os.Process) string {
				if err := p.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
				return ""
			},
		},
		{
			name: "SIGTERM while waiting", wait: "--wait=1h", wantCode: 130,
			act: func(t *testing.T, _ *sessions.Board, p *os.Process) string {
				if err := p.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				return ""
			},
		},
	}
	exe := pkSelf(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			pkPut(t, b, sessions.Doing, "other", "held", sessions.Meta{})
			cmd := pickupCmd(exe, "--dir", b.Dir, "--owner", "waiter", "--no-sync", "--json", "next", tt.wait)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer func() {
				if cmd.ProcessState == nil {
					_ = cmd.Process.Kill()
					<-exited
				}
			}()
			want := ""
			if tt.act != nil {
				waWatching(t, cmd.Process.Pid)
				want = tt.act(t, b, cmd.Process)
			}
			var err error
			select {
			case err = <-exited:
			case <-time.After(waPatience):
				t.Fatalf("pickup next %s did not exit\nstderr:\n%s", tt.wait, stderr.String())
			}
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode {
				t.Errorf("pickup next %s: exit code %d, want %d\nstdout: %s\nstderr: %s", tt.wait, code, tt.wantCode, stdout.String(), stderr.String())
			}
			if want == "" {
				if w, err := pkWalk(b); err != nil || len(w) != 1 || len(w["held"]) != 1 {
					t.Errorf("the board changed: %v, %v", w, err)
				}
				return
			}
			var got struct{ ID, State, Owner string }
			if err := json.Unmarshal([]byte(stdout.String()), &got); err != nil {
				t.Fatalf("stdout %q: %v", stdout.String(), err)
			}
			if got.ID != want || got.State != "doing" || got.Owner != "waiter" {
				t.Errorf("claimed %+v, want %s in doing by waiter", got, want)
			}
			if where := pkWhere(t, b, want); where != "doing/waiter" {
				t.Errorf("%s is in %s, want doing/waiter", want, where)
			}
		})
	}
}
