package cli

// The command line over a kind of arbiter that lives in its own package
// (arbiter.Kind, which location.KindOf picks, and the arbiter.Arbiter that
// location.Open attaches): this file only turns the command's flags and
// environment into arbiter.Options and prints what the steps report. It
// knows no kind by name.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/claim"
	arbiterapi "github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/arbiter/location"
	"github.com/pickup-dev/pickup/internal/leasebook"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// kindSteps is an arbiter.Kind as the command line runs it.
type kindSteps struct{ k arbiterapi.Kind }

// options are what the command knows of the machine and its command line
// for the arbiter of b: its lease records, the network deadline, the host
// name of heartbeats, git's proxy, where warnings go, and the detached
// pusher of a PostgreSQL board's history.
func (m *sharedMode) options(b *sessions.Board) (arbiterapi.Options, error) {
	o := arbiterapi.Options{Leases: leasebook.Of(b), NoReady: true, OnHistoryDue: spawnHistoryPusher}
	var err error
	if o.NetTimeout, err = m.netTimeout(); err != nil {
		return o, err
	}
	if m.hostname != nil {
		o.Host, _ = m.hostname()
	}
	if m.proxy != nil {
		o.GitProxy = m.proxy()
	}
	if m.stderr != nil {
		stderr := m.stderr
		o.Warn = func(s string) { fmt.Fprintf(stderr, "pickup: warning: %s\n", sanitize(s)) }
	}
	return o, nil
}

// open attaches b's arbiter without bringing the board in line (ready
// does).
func (k kindSteps) open(ctx context.Context, m *sharedMode, b *sessions.Board, cfg sessions.Config) (arbiter, error) {
	return m.openArbiter(ctx, b, cfg)
}

// openArbiter attaches b's arbiter through location.Open, as every door
// does, without bringing the board in line.
func (m *sharedMode) openArbiter(ctx context.Context, b *sessions.Board, cfg sessions.Config) (arbiter, error) {
	o, err := m.options(b)
	if err != nil {
		return nil, err
	}
	a, err := location.Open(ctx, b, cfg, o)
	if err != nil {
		return nil, err
	}
	return openArbiter{a}, nil
}

func (k kindSteps) initBoard(r *run, _ *ucli.Context, target string) error {
	dir, err := r.boardDir()
	if err != nil {
		return err
	}
	b, err := sessions.Init(dir)
	if err != nil {
		return err
	}
	r.noSync = r.noSync || b.NoSync
	o, err := r.shared.options(b)
	if err != nil {
		return err
	}
	rep, err := k.k.Init(context.Background(), b, target, o)
	if err != nil {
		return err
	}
	return r.printReport(rep)
}

func (k kindSteps) beforeCommand(m *sharedMode, b *sessions.Board, cfg sessions.Config) error {
	o, err := m.options(b)
	if err != nil {
		return err
	}
	return k.k.BeforeCommand(context.Background(), b, cfg, o)
}

func (k kindSteps) beatDue(dir, owner string, every time.Duration, now time.Time) bool {
	return k.k.BeatDue(dir, owner, every, now)
}

func (k kindSteps) viewsFresh() bool { return k.k.ViewsFresh() }

func (k kindSteps) findings(r *run, b *sessions.Board, cfg sessions.Config) []sessions.Finding {
	o, _ := r.shared.options(b) // a bad $PICKUP_NETWORK_TIMEOUT: the default deadline
	return k.k.Findings(context.Background(), b, cfg, o)
}

func (k kindSteps) repair(r *run, b *sessions.Board, cfg sessions.Config) error {
	o, err := r.shared.options(b)
	if err != nil {
		return err
	}
	rep, err := k.k.Repair(context.Background(), b, cfg, o)
	if err != nil {
		return err
	}
	return r.printReport(rep)
}

// printReport prints what a step reports: its warnings on stderr, then
// its JSON (--json) or its lines.
func (r *run) printReport(rep arbiterapi.Report) error {
	for _, w := range rep.Warnings {
		fmt.Fprintf(r.env.Stderr, "pickup: warning: %s\n", sanitize(w))
	}
	if r.json {
		return r.printJSON(rep.JSON)
	}
	for _, l := range rep.Text {
		r.printf("%s\n", sanitize(l))
	}
	return nil
}

// openArbiter is an open arbiter.Arbiter as the commands use it.
type openArbiter struct{ a arbiterapi.Arbiter }

func (o openArbiter) ready(ctx context.Context, trustRecent bool) error {
	return o.a.Ready(ctx, trustRecent)
}

func (o openArbiter) answerAgain(ctx context.Context, err error, answers ...error) (bool, error) {
	return o.a.AnswerAgain(ctx, err, answers...)
}

func (o openArbiter) watch(ctx context.Context, warn func(error)) func() {
	return o.a.Watch(ctx, warn)
}

func (o openArbiter) heartbeat(ctx context.Context, owner string, every time.Duration) error {
	return o.a.Heartbeat(ctx, owner, every)
}

func (o openArbiter) sync(ctx context.Context, r *run) error {
	rep, err := o.a.Sync(ctx)
	if err != nil {
		return err
	}
	return r.printReport(rep)
}

// settle: a session that another process of this clone moved first is
// named with where the arbiter has it once that process's transition is
// settled there, so that a loser names the winner at the arbiter, not a
// local racer that lost there too.
func (o openArbiter) settle(ctx context.Context, err error) error {
	var e *claim.Error
	if !errors.As(err, &e) || e.Arbiter || !errors.Is(err, claim.ErrSessionNotAvailable) || e.Holder == "" {
		return err
	}
	if st, owner, ok := o.a.Settled(ctx, e.ID); ok {
		e.State, e.Holder = st, owner
	}
	return err
}

func (o openArbiter) close() { _ = o.a.Close() }

// status is what the arbiter says of itself in pickup status.
func (o openArbiter) status(ctx context.Context) []string { return o.a.Status(ctx) }

// heard is what the arbiter knows of an owner that holds no lease here.
func (o openArbiter) heard(owner string) (arbiterapi.Heard, bool) { return o.a.Heard(owner) }

// locks is the arbiter's named locks, if it holds them.
func (o openArbiter) locks(now func() time.Time) (arbiterapi.LockBook, bool) {
	h, ok := o.a.(arbiterapi.LockHolder)
	if !ok {
		return nil, false
	}
	return h.Locks(now), true
}

// spawnHistoryPusher starts the pusher of the history of the board in dir
// (a PostgreSQL board's, in git), detached: a state read found a push due
// and took the turn. The command that read it pays only for starting a
// process (once per interval across every machine), never for git.
func spawnHistoryPusher(dir string) {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	cmd := exec.Command(exe, "--dir", dir, "pg-history")
	cmd.Dir = dir
	cmd.Env = os.Environ()
	// Its own session and /dev/null for stdio: a caller's $(…) or pipe
	// ends with the command, not with the push.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if cmd.Start() == nil {
		_ = cmd.Process.Release()
	}
}

// pgHistoryCommand is spawnHistoryPusher's detached child: one batch, then
// exit. Its failure goes to the runtime folder, for status.
func (r *run) pgHistoryCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "pg-history",
		Hidden:    true,
		Usage:     "push a PostgreSQL board's history to git (started by pickup when a batch is due)",
		UsageText: "pickup pg-history",
		Action: func(c *ucli.Context) error {
			b, err := r.board()
			if err != nil {
				return err
			}
			cfg := r.shared.config()
			if cfg == nil {
				return nil
			}
			o, err := r.shared.options(b)
			if err != nil {
				return err
			}
			return location.PushHistory(b, *cfg, o)
		},
	}
}

// spawnClaimBeat is spawnBeat after a claim registered its owner, unless
// the kind's transitions record their owner's heartbeat themselves (a
// PostgreSQL board: one statement); the hooks, which make no transition,
// still start one.
func (r *run) spawnClaimBeat(b *sessions.Board, owner string) {
	if cfg := r.shared.config(); cfg != nil && cfg.Shared != "" {
		if k := location.KindOf(cfg.Shared); k != nil && k.TransitionsBeat() {
			return
		}
	}
	r.spawnBeat(b, owner)
}

// workPoll keeps a shared board in line while `pickup work --wait` waits
// (see arbiter.watch), so that sessions made or released in other clones
// land in todo/, where the pool's watch sees them: on a PostgreSQL board
// within milliseconds (LISTEN/NOTIFY). It returns a function that stops
// it.
func (r *run) workPoll(ctx context.Context, wait bool) func() {
	if !wait {
		return func() {}
	}
	return r.sharedPoll(ctx)
}
