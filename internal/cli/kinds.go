package cli

// The command line over a kind of arbiter that lives in its own package
// (arbiter.Kind, which location.KindOf picks, and the arbiter.Arbiter that
// location.Open attaches): this file only turns the command's flags and
// environment into arbiter.Options and prints what the steps report. It
// knows no kind by name.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

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

// open attaches b's arbiter through location.Open, as every door does,
// without bringing the board in line (ready does).
func (k kindSteps) open(ctx context.Context, m *sharedMode, b *sessions.Board, cfg sessions.Config) (arbiterapi.Arbiter, error) {
	o, err := m.options(b)
	if err != nil {
		return nil, err
	}
	return location.Open(ctx, b, cfg, o)
}

func (k kindSteps) initBoard(r *run, c *ucli.Context, target string) error {
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
	o.Follow, o.Explicit = c.Bool("follow"), c.NArg() == 1
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
	// What the repair did is shown even when the board is still not in
	// line after it (the error follows); --json shows the error alone.
	rep, err := k.k.Repair(context.Background(), b, cfg, o)
	if err != nil && (r.json || rep.JSON == nil) {
		return err
	}
	if perr := r.printReport(rep); perr != nil {
		return perr
	}
	return err
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
