package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/arbiter/dburl"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/sessions"
)

// Follower is a PostgreSQL database as a live view follows it: a waiter
// of its own blocks in the database until any transition on any machine
// (Waiter.WaitMoves), then Refresh writes the sessions where the
// database has them; the owners' heartbeats say who works elsewhere. A
// database that does not answer is opened again at the next Refresh (a
// helper that went away is started again).
type Follower struct {
	b      *sessions.Board
	url    string // config.yaml's shared:
	opts   Options
	every  time.Duration
	leases arbiter.Leases

	mu    sync.Mutex
	pg    *Board  // nil until the database answered
	w     *Waiter // nil until a Wait
	since int64
	beats map[string]Beat
}

// NewFollower follows the database at url for b; it connects at the
// first Refresh or Wait. every is how often a view reads it without a
// transition to wake it.
func NewFollower(b *sessions.Board, url string, o Options, every time.Duration, leases arbiter.Leases) *Follower {
	return &Follower{b: b, url: url, opts: o, every: every, leases: leases}
}

// board is the open database, connecting if need be.
func (f *Follower) board(ctx context.Context) (*Board, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pg != nil {
		return f.pg, nil
	}
	pg, err := OpenWith(ctx, f.b, f.url, f.opts)
	if err != nil {
		return nil, err
	}
	boardhook.ClearArbiter(f.b) // the view only shows: Refresh needs no arbiter
	pg.Leases = f.leases
	f.pg = pg
	return pg, nil
}

// drop closes the database and the waiter after a failure.
func (f *Follower) drop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w != nil {
		f.w.Close()
		f.w = nil
	}
	if f.pg != nil {
		f.pg.Close()
		f.pg = nil
	}
}

// Refresh reads what changed; heard are the owners whose heartbeats it
// read (their ages move with every read).
func (f *Follower) Refresh(ctx context.Context) (bool, []string, error) {
	pg, err := f.board(ctx)
	if err != nil {
		return false, nil, err
	}
	moved, err := pg.Refresh(ctx)
	if err != nil {
		f.drop()
		return false, nil, err
	}
	beats := map[string]Beat{}
	var heard []string
	for _, b := range pg.Beats() {
		beats[b.Owner] = b
		heard = append(heard, b.Owner)
	}
	f.mu.Lock()
	f.beats = beats
	f.mu.Unlock()
	return moved, heard, nil
}

// Wait blocks in the database until a transition anywhere since the last
// one it saw, or d (the first returns at once).
func (f *Follower) Wait(ctx context.Context, d time.Duration) error {
	pg, err := f.board(ctx)
	if err != nil {
		return err
	}
	f.mu.Lock()
	if f.w == nil {
		if f.w, err = pg.NewWaiter(); err != nil {
			f.w = nil
			f.mu.Unlock()
			f.drop()
			return err
		}
	}
	w, since := f.w, f.since
	f.mu.Unlock()
	stop := context.AfterFunc(ctx, w.Close) // a wait under way returns at once
	defer stop()
	v, err := w.WaitMoves(since, d)
	if err != nil {
		f.drop()
		return err
	}
	f.mu.Lock()
	f.since = v
	f.mu.Unlock()
	return nil
}

func (f *Follower) Every() time.Duration { return f.every }
func (f *Follower) Listens() bool        { return true }

// Where is the database's URL without its password.
func (f *Follower) Where() string {
	r, _ := dburl.Redact(f.url)
	return r
}

// Elsewhere: an owner with no process here whose heartbeat the database
// has works on another machine (or another board of this one), the one
// its heartbeat names.
func (f *Follower) Elsewhere(owner string, _ bool) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.beats[owner]
	return b.Host, ok
}

// Say is err as a status line says it: the database's own words, the
// cause first (the URL is on the header already, and a line may be cut).
func (f *Follower) Say(err error) string {
	if err == nil {
		return ""
	}
	var de *DatabaseError
	text := err.Error()
	if errors.As(err, &de) && de.Err != nil {
		text = de.Err.Error()
	}
	// pgx names the user and database first.
	if rest, ok := strings.CutPrefix(text, "failed to connect to `"); ok {
		if _, cause, ok := strings.Cut(rest, "`: "); ok {
			text = cause
		}
		if _, cause, ok := strings.Cut(text, "dial error: "); ok {
			text = cause // "host:port (address): dial error: dial tcp …"
		}
	}
	return text
}

// Close closes the waiter and the database.
func (f *Follower) Close() error {
	f.drop()
	return nil
}

var _ arbiter.Follower = (*Follower)(nil)
