package cli

// Heartbeats of a shared board from every path that keeps an owner alive:
// claims and `pickup heartbeat` (in the command), `pickup work` (its lease
// renewal loop) and the Claude Code hooks (a detached `pickup shared-beat`,
// so that a hook never waits for the network). All of them push through
// sharedHeartbeat, at most once per a quarter of the stale period.

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// beatEvery is how often an owner's heartbeat ref is pushed: a quarter of
// the stale period (config.yaml stale:, default 30m), so that three pushes
// may be lost before another clone could reap a live owner.
func beatEvery(cfg *sessions.Config) time.Duration {
	stale := 30 * time.Minute
	if cfg != nil && cfg.Stale > 0 {
		stale = cfg.Stale
	}
	return stale / 4
}

// spawnBeat starts a detached `pickup shared-beat` for owner when b is a
// shared board and this clone last pushed owner's heartbeat more than
// beatEvery ago. It costs the hook one read of config.yaml and one stat;
// the push (a network round trip) happens in the child, after the hook has
// returned. Failures are silent: the hook must never block Claude Code.
func (r *run) spawnBeat(b *sessions.Board, owner string) {
	cfg, err := b.Config()
	if err != nil || cfg.Shared == "" || !kindOf(cfg.Shared).beatDue(b.Dir, owner, beatEvery(&cfg), time.Now()) {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	cmd := exec.Command(exe, "--dir", b.Dir, "--owner", owner, "shared-beat")
	cmd.Dir = b.Dir
	cmd.Env = os.Environ()
	// Its own session: no terminal signal of Claude Code's reaches it, and
	// its stdio is /dev/null, so Claude Code's pipes close when the hook
	// exits.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if cmd.Start() == nil {
		_ = cmd.Process.Release()
	}
}

// sharedBeatCommand is the detached child of spawnBeat: it pushes the
// owner's heartbeat ref if still due, and nothing else (no fetch).
func (r *run) sharedBeatCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "shared-beat",
		Hidden:    true,
		Usage:     "push the owner's heartbeat ref of a shared board (run by pickup's Claude Code hooks)",
		UsageText: "pickup --owner OWNER shared-beat",
		Action: func(c *ucli.Context) error {
			b, err := r.board()
			if err != nil {
				return err
			}
			owner, err := r.ownerName()
			if err != nil {
				return err
			}
			cfg := r.shared.config()
			if cfg == nil || cfg.Shared == "" {
				return nil
			}
			arb, err := kindOf(cfg.Shared).open(context.Background(), &r.shared, b, *cfg)
			if err != nil {
				return err
			}
			defer arb.Close()
			r.shared.adopt(arb)
			r.sharedHeartbeat(owner, false)
			return nil
		},
	}
}
