// Package postgres makes PostgreSQL the arbiter of a board shared by many
// clones and machines (pickup init --shared postgres://…): a transition
// stands only once one transaction moved the session's row in the
// database from where the transition found it.
//
// # Design
//
// The board stays a directory of markdown files, and the transitions stay
// what they are on every board: a no-replace rename here first (which
// settles racers of one clone), then the board's arbiter (internal/boardhook), the same hook
// the git-shared board uses. Here the arbiter sends the transition to the
// database: one transaction runs `UPDATE pickup_sessions … WHERE id = $1
// AND state = <from> AND owner = <from owner>` and appends the transition
// to pickup_events. One row moved: it stands (a claim takes a fencing
// token from a sequence, growing across machines). No row: someone moved
// it first, the local move is undone (the session goes where the database
// has it) and the claim lost, exactly as at a git remote that refused a
// push. The connection failing: the local move is undone and the command
// fails with ErrDatabase (exit 8); a COMMIT whose answer was lost is read
// back (its event row exists exactly when it committed), never guessed.
//
// The board directory of each clone is a mirror of the database that
// pickup keeps: before a command reads the board (Refresh), sessions made
// or moved elsewhere are written here. Refresh moves a session here only
// if its file is still where the last view of the database put it; one
// that a local transition has moved since (even while Refresh reads its
// content) is left to that transition's arbiter, which never places it by
// a row older than the view (mirror.go, placeRow); pickup sync moves a
// second copy of a session to conflicts/ (copies.go). The view (which
// version of each row this directory shows) is kept in .pickup/pg-view
// under a flock. Refresh reads only the rows
// written since its last read, not every row at every command: each row
// names the transaction that last wrote it (pickup_sessions.txid, set by
// a trigger), and the view keeps the horizon of the last read, the oldest
// transaction then running (txid_snapshot_xmin); every transaction before
// it had committed or was gone, so a transaction that took its version
// before a read and committed after it is read the next time. Each
// session Refresh places gets its transition's line in this board's
// events.log (the database's op and who), so that the history here ends
// where the session is. A live view (pickup board) waits for any
// transition with Waiter.WaitMoves and refreshes.
//
// # Why a helper process
//
// pgx needs package net, and linking net makes pickup dynamically linked
// and slower to start at every hook (TestNoCResolver). So pickup never
// links pgx: it starts pickup-postgres (found next to its own executable,
// else on PATH) and speaks a line protocol of JSON objects with it on its
// standard input and output (wire.go); the helper holds the connection
// and exits when pickup closes its input (or dies). Only commands on a
// PostgreSQL board pay for it.
//
// # Limits
//
// The password is never written to config.yaml: libpq's PGPASSWORD,
// ~/.pgpass and PG* variables supply it, as pgx reads them. Owners on
// other hosts are judged by their heartbeats in pickup_beats (mirror.go,
// beat.go); named locks across machines live in pickup_locks (locks.go).
// The history in git, in batches: history.go.
package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter/dburl"
	"github.com/pickup-dev/pickup/internal/boardhook"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/idsuffix"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// HelperName is the helper command's name.
const HelperName = "pickup-postgres"

// ErrDatabase: the database could not be reached, dropped the connection,
// or refused the request; nothing moved here. It comes as a *DatabaseError.
var ErrDatabase = arbiter.ErrDatabase

// DatabaseError says which database failed doing what.
type DatabaseError struct {
	URL string // without a password
	Op  string
	Err error
	// Unknown: a transition whose commit was not heard, and which could
	// not be read back: it may stand in the database. The local move was
	// undone; the next command's Refresh shows the truth.
	Unknown bool
	// transient: nothing happened, and the same request may succeed
	// later (retry.go).
	transient bool
}

func (e *DatabaseError) Error() string {
	return fmt.Sprintf("%s: database %s: %v", e.Op, e.URL, e.Err)
}

// Unwrap gives ErrDatabase only.
func (e *DatabaseError) Unwrap() error { return ErrDatabase }

// Hint says what to do.
func (e *DatabaseError) Hint() string {
	if e.Err != nil && strings.Contains(e.Err.Error(), "schema is newer than this pickup") {
		return "a newer pickup migrated this database: install the newer pickup and pickup-postgres on this machine (go install github.com/pickup-dev/pickup@latest github.com/pickup-dev/pickup/internal/cmd/pickup-postgres@latest); nothing was changed (the new install starts a daemon of its own)"
	}
	if e.Unknown {
		return "the database may or may not have taken this transition; the session was put back here as it was: when the database answers again, run `pickup sync` and `pickup show ID` to see where it is"
	}
	return "nothing was moved on this board; check that the database answers (psql with the same URL and PG* environment: server running, network, password in ~/.pgpass or PGPASSWORD), then run the command again"
}

// Board is a board whose transitions PostgreSQL arbitrates.
type Board struct {
	B   *sessions.Board
	URL string // without a password
	// Host is this machine's name, recorded with the heartbeats that
	// transitions and Beat make (os.Hostname's unless set).
	Host string
	// Warning says why this process does not use the machine's daemon,
	// when it was wanted (the command goes on, slower); "" if it does.
	Warning string
	// Leases are this machine's lease records: a session moved from an
	// owner's hands elsewhere fences that owner here (its late done
	// exits claim.ErrClaimLost); nil records nothing. internal/leasebook
	// makes them.
	Leases arbiter.Leases

	url    string // as given
	helper string
	chMu   sync.Mutex // guards ch, which retry.go replaces when it broke
	ch     *channel
	retry  retryPolicy
	mu     sync.Mutex
	opened *Response // open's answer: the state, for the first Refresh
	beats  []Beat    // the last Refresh's (Beats)
	// heard: when each owner last heartbeat in the database, on this
	// machine's clock, as the last Refresh read it (LastHeard).
	heard map[string]time.Time
	// holders: the lease processes boards of this machine recorded in
	// the database, by owner, as the last Refresh read them (holders.go).
	holders map[string][]proc.Process
	// historyEvery: the state reads ask whether a history push is due
	// (history.go); historyDue: one said so, and took the turn.
	historyEvery time.Duration
	historyDue   bool
	onHistoryDue func()
}

// Options are OpenWith's.
type Options struct {
	// HistoryEvery: this board's history goes to git (history.go), one
	// push at most this often; 0 for a board without history here.
	HistoryEvery time.Duration
	// OnHistoryDue is called when a state read finds a history push due
	// and takes the turn for this process: it starts the pusher. It is
	// called at once, not at the end of the command, so that a process
	// that runs for hours (work, next --wait) does not sit on the turn.
	OnHistoryDue func()
	// NetworkTimeout: how long a request rides over a database that
	// refuses or drops connections (a restart, a failover, a daemon
	// killed) before it fails with ErrDatabase (retry.go); 0 is
	// DefaultNetworkTimeout.
	NetworkTimeout time.Duration
}

// Open starts the helper, connects to the database at url (migrating the
// schema if needed) and makes it b's arbiter. It sets b's arbiter, id suffix and
// last-heard source (internal/boardhook). Close stops the helper.
func Open(ctx context.Context, b *sessions.Board, url string) (*Board, error) {
	return OpenWith(ctx, b, url, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, b *sessions.Board, url string, o Options) (*Board, error) {
	redacted, _ := dburl.Redact(url)
	s := &Board{B: b, URL: redacted, url: url, historyEvery: o.HistoryEvery, onHistoryDue: o.OnHistoryDue,
		retry: retryPolicy{deadline: o.NetworkTimeout}}
	s.Host, _ = os.Hostname()
	var err error
	if s.helper, err = FindHelper(); err != nil {
		return nil, err
	}
	res, err := s.connect()
	if err != nil {
		return nil, err
	}
	s.opened = &res
	suffix, err := s.idSuffix()
	if err != nil {
		s.Close()
		return nil, err
	}
	boardhook.SetIDSuffix(b, suffix)
	boardhook.SetArbiter(b, s.Arbiter)
	boardhook.SetLastHeard(b, s.LastHeard)
	boardhook.SetHeard(b, s.HeardHolders)
	return s, nil
}

// connect dials the helper and opens the database, answering with the
// state. A daemon that goes away before it answers (it was exiting after a
// minute idle just as this process connected), or a database that does
// not answer yet, is ridden over by call (retry.go).
func (s *Board) connect() (Response, error) {
	ch, err := dial(s.helper, s.url)
	if err != nil {
		return Response{}, err
	}
	s.chMu.Lock()
	s.ch, s.Warning = ch, ch.noDaemon
	s.chMu.Unlock()
	res, err := s.call("connect", s.stateRequest(s.readRequest("open", false)))
	if err != nil {
		s.Close()
		return Response{}, err
	}
	s.sawHistoryDue(res)
	return res, nil
}

// stateRequest asks a state read to say whether a history push is due.
func (s *Board) stateRequest(req Request) Request {
	if s.historyEvery > 0 {
		req.HistoryEveryMS = max(s.historyEvery.Milliseconds(), 1)
		req.Owner = Leader()
	}
	return req
}

func (s *Board) sawHistoryDue(res Response) {
	if !res.HistoryDue {
		return
	}
	s.mu.Lock()
	s.historyDue = true
	s.mu.Unlock()
	if s.onHistoryDue != nil {
		s.onHistoryDue()
	}
}

// Close stops the helper (it exits when its input ends).
func (s *Board) Close() { s.channel().close() }

// Waiter is a channel of its own that blocks in the database until a
// session arrives in todo (LISTEN/NOTIFY), so that next --wait wakes
// within milliseconds of a new, release, reopen or reap on any machine.
type Waiter struct {
	ch      *channel
	once    sync.Once
	channel string // Request.Channel
}

// NewWaiter opens a waiter.
func (s *Board) NewWaiter() (*Waiter, error) {
	ch, err := dial(s.helper, s.url)
	if err != nil {
		return nil, err
	}
	if _, err := ch.call("connect", Request{Op: "open", URL: s.url}); err != nil {
		ch.close()
		return nil, err
	}
	return &Waiter{ch: ch}, nil
}

// Wait returns when a session arrived in todo on any board of the
// database, or after at most d.
func (w *Waiter) Wait(d time.Duration) error {
	_, err := w.ch.call("wait", Request{Op: "wait", Channel: w.channel, TimeoutMS: int(d / time.Millisecond)})
	return err
}

// Close closes the waiter; a Wait under way returns at once.
func (w *Waiter) Close() {
	w.once.Do(func() {
		w.ch.abort()
		w.ch.close()
	})
}

// idSuffix is this clone's id suffix, made once and kept in .pickup/, so
// that boards sharing a database never make the same id.
func (s *Board) idSuffix() (string, error) {
	path := filepath.Join(s.B.RuntimeDir(), "pg-id-suffix")
	read := func() (string, bool) {
		data, err := fsx.ReadRegular(path)
		v := strings.TrimSpace(string(data))
		return v, err == nil && idsuffix.Valid(v)
	}
	if v, ok := read(); ok {
		return v, nil
	}
	random := make([]byte, idsuffix.Len)
	_, _ = rand.Read(random)
	v, err := idsuffix.New(random)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(s.B.RuntimeDir(), 0o755); err != nil {
		return "", err
	}
	if err := fsx.WriteNew(path, []byte(v+"\n"), 0o644, true); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("postgres board: id suffix: %w", err)
	}
	if kept, ok := read(); ok {
		return kept, nil // another process wrote one first
	}
	return v, nil
}
