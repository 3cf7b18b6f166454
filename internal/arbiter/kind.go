package arbiter

import (
	"context"
	"errors"
	"time"

	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// Kind is what config.yaml's shared: names (a git remote, a PostgreSQL
// database): the steps a front end takes before it opens the arbiter, or
// without one. internal/arbiter/location picks it (KindOf), so that no
// front end tells the kinds apart.
type Kind interface {
	// Init is `pickup init --shared TARGET` on b, a board sessions.Init
	// made or found: it puts the board on the arbiter (or joins the one
	// there) and records it in config.yaml.
	Init(ctx context.Context, b *sessions.Board, target string, o Options) (Report, error)
	// BeforeCommand runs before any command reads the board (a git
	// remote's queued pushes of killed processes); cheap when there is
	// nothing to do.
	BeforeCommand(ctx context.Context, b *sessions.Board, cfg sessions.Config, o Options) error
	// BeatDue reports whether a hook should start a detached heartbeat
	// for owner (one stat or so: it runs in every hook).
	BeatDue(dir, owner string, every time.Duration, now time.Time) bool
	// TransitionsBeat: the kind's transitions record their owner's
	// heartbeat themselves (one statement), so a claim needs no detached
	// heartbeat.
	TransitionsBeat() bool
	// ViewsFresh: commands that only show the board (list, show,
	// status) bring it in line first. A database read is cheap; a fetch
	// is not, so a git-shared board shows its last fetch.
	ViewsFresh() bool
	// HoldsLocks: the open arbiter holds named locks too (LockHolder), so
	// a lock command opens it first.
	HoldsLocks() bool
	// Findings are doctor's findings about the arbiter.
	Findings(ctx context.Context, b *sessions.Board, cfg sessions.Config, o Options) []sessions.Finding
	// Repair is `pickup sync --repair`.
	Repair(ctx context.Context, b *sessions.Board, cfg sessions.Config, o Options) (Report, error)
}

// Options are how a front end opens an arbiter (location.Open) or runs a
// Kind's steps: what it knows of the machine and the command line.
type Options struct {
	// Leases are this machine's lease records (claim's), where the
	// arbiter records reaps and heartbeats of owners elsewhere.
	Leases Leases
	// NetTimeout bounds every git command that talks to a remote, and
	// how long a database's requests ride over its failures (0:
	// config.yaml's network_timeout, else the default).
	NetTimeout time.Duration
	// Host names this machine in heartbeats ("": os.Hostname).
	Host string
	// GitProxy, if set, relays the git commands that talk to a remote
	// (gitx.Repo.Proxy).
	GitProxy string
	// Warn takes what opening survives (a PostgreSQL board that does not
	// use the machine's daemon); nil drops it.
	Warn func(string)
	// NoReady: attach without bringing the board in line (the caller
	// calls Ready itself).
	NoReady bool
	// TrustRecent is Ready's (see Arbiter.Ready).
	TrustRecent bool
	// OnHistoryDue, if set, starts the pusher of a PostgreSQL board's
	// history in git for the board in dir (pickup's commands start a
	// detached `pickup pg-history`; a Go program pushes none).
	OnHistoryDue func(dir string)
	// PollEvery is how often a follower reads a database that no
	// transition wakes (0: a second; see location.Follow).
	PollEvery time.Duration
	// Follow is init --shared --follow: take what config.yaml on the
	// board branch says.
	Follow bool
	// Explicit: init --shared was given its target (not the default).
	Explicit bool
}

// Report is what a step tells the person or script that ran it, which the
// front end prints: Text for people (one line each), JSON for --json, and
// Warnings for stderr.
type Report struct {
	Text     []string
	JSON     any
	Warnings []string
}

// Heard is what an arbiter knows of an owner that holds no lease on this
// board (it works in another board of the arbiter).
type Heard struct {
	// Holders are its lease's processes, shared from another board of
	// this machine (it is judged by them).
	Holders []proc.Process
	// Host is the machine of its last heartbeat ("" if it did not say).
	Host string
	// ThisMachine: Holders came from this machine, or its last heartbeat
	// did.
	ThisMachine bool
	// Beat: the arbiter has a heartbeat of it, Age old on the arbiter's
	// clock.
	Beat bool
	Age  time.Duration
}

// Advice is an error a front end shows with its hint and exit code: what
// an arbiter's step refused before it changed anything (Code 2: bad input)
// or could not do (Code 8: the arbiter failed). Code is always set.
type Advice struct {
	Err  error
	Fix  string // the hint: what to do next
	Code int
}

func (e *Advice) Error() string { return e.Err.Error() }
func (e *Advice) Unwrap() error { return e.Err }
func (e *Advice) Hint() string  { return e.Fix }
func (e *Advice) ExitCode() int { return e.Code }

// ErrUsage marks a step that was asked for something it does not do (exit
// 2): sync --repair on a PostgreSQL board.
var ErrUsage = errors.New("usage")
