package cli

// The history of a PostgreSQL board in git (see internal/arbiter/postgres's
// history.go): config.yaml's `history: REMOTE` names the git remote whose
// board branch (shared_branch, default "pickup") gets the transitions in
// batches, at most one push every history_every (default 1m). The
// command that finds a push due starts a detached `pickup pg-history`,
// so claims never wait for git; `pickup sync` pushes at once.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter/gitremote"
	"github.com/pickup-dev/pickup/internal/arbiter/location"
	"github.com/pickup-dev/pickup/internal/arbiter/postgres"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/internal/leasebook"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// historyErrorFile, in the board's runtime folder, holds the last
// background push's failure (removed when one succeeds), for status.
const historyErrorFile = "pg-history.err"

// pgBoard is the command's PostgreSQL board, nil if its arbiter is not
// one (or none was made ready).
func (m *sharedMode) pgBoard() *postgres.Board {
	if a, ok := m.arbiter().(*pgArbiter); ok {
		return a.pg
	}
	return nil
}

// historyOn reports whether cfg sends a PostgreSQL board's history to
// git, and how often at most.
func historyOn(cfg *sessions.Config) (time.Duration, bool) {
	if cfg == nil || cfg.History == "" || cfg.History == "off" {
		return 0, false
	}
	if cfg.HistoryEvery > 0 {
		return cfg.HistoryEvery, true
	}
	return sessions.DefaultHistoryEvery, true
}

// historyBranch is the remote's branch that gets the history.
func historyBranch(cfg *sessions.Config) string {
	if cfg.SharedBranch != "" {
		return cfg.SharedBranch
	}
	return gitremote.DefaultBranch
}

// pgOptions are the options of a PostgreSQL board in dir opened with cfg.
func pgOptions(cfg *sessions.Config, dir string) postgres.Options {
	every, on := historyOn(cfg)
	if !on {
		return postgres.Options{}
	}
	return postgres.Options{HistoryEvery: every, OnHistoryDue: func() { spawnHistoryPusher(dir) }}
}

// historyTarget is where b's history goes: the git clone b is in, the
// remote config.yaml names and its board branch.
func (r *run) historyTarget(ctx context.Context, b *sessions.Board, cfg *sessions.Config) (postgres.History, error) {
	repo, err := gitx.Find(ctx, b.Dir)
	if err != nil {
		return postgres.History{}, fmt.Errorf("history: %s is not in a git clone (history: %s in config.yaml): %w", b.Dir, cfg.History, err)
	}
	if r.shared.proxy != nil {
		repo.Proxy = r.shared.proxy()
	}
	if d, err := r.shared.netTimeout(); err == nil && d > 0 {
		repo.NetTimeout = d
	}
	return postgres.History{Repo: repo, Remote: cfg.History, Branch: historyBranch(cfg), Leader: postgres.Leader()}, nil
}

// spawnHistoryPusher starts the history's pusher for the board in dir,
// detached: a state read found a push due and took the turn. The command
// that read it pays only for starting a process (once per interval
// across every machine), never for git.
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
			if cfg == nil || !location.IsDatabase(cfg.Shared) {
				return nil
			}
			every, on := historyOn(cfg)
			if !on {
				return nil
			}
			_, err = r.flushHistory(b, cfg, every, 0)
			errPath := filepath.Join(b.RuntimeDir(), historyErrorFile)
			if err != nil {
				_ = os.MkdirAll(b.RuntimeDir(), 0o755)
				_ = fsx.WriteReplace(errPath, []byte(time.Now().UTC().Format(time.RFC3339)+" "+err.Error()+"\n"), 0o644, false)
				return err
			}
			_ = os.Remove(errPath)
			return nil
		},
	}
}

// flushHistory pushes b's history now, as the one pusher (waiting up to
// wait for another).
func (r *run) flushHistory(b *sessions.Board, cfg *sessions.Config, every, wait time.Duration) (postgres.FlushResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait+5*time.Minute)
	defer cancel()
	h, err := r.historyTarget(ctx, b, cfg)
	if err != nil {
		return postgres.FlushResult{}, err
	}
	pg := r.shared.pgBoard()
	if pg == nil {
		if pg, err = r.pgOpen(ctx, b, cfg.Shared, *cfg); err != nil {
			return postgres.FlushResult{}, err
		}
		pg.Leases = leasebook.Of(b)
		defer pg.Close()
		boardhook.ClearArbiter(b)
	}
	h.OnRewind = func(dropped string, repushed int) {
		logHistory(b, rewoundLine(dropped, repushed, cfg.History+" "+historyBranch(cfg)))
	}
	return pg.Flush(ctx, h, every, true, wait)
}

// syncHistory is pickup sync's part: push the history now. It returns a
// line to print, and a failure as a warning (sync's own work is done).
func (r *run) syncHistory(pg *postgres.Board) (map[string]any, string) {
	cfg := r.shared.config()
	every, on := historyOn(cfg)
	if !on {
		return nil, ""
	}
	res, err := r.flushHistory(pg.B, cfg, every, time.Minute)
	where := cfg.History + " " + historyBranch(cfg)
	out := map[string]any{"remote": cfg.History, "branch": historyBranch(cfg), "events": res.Events}
	rewound := ""
	if res.Rewound {
		out["rewound"] = map[string]any{"dropped": res.Dropped, "repushed": res.Repushed}
		rewound = "history: " + rewoundLine(res.Dropped, res.Repushed, where) + "\n"
	}
	out1, line := syncHistoryLine(res, err, where, out)
	return out1, rewound + line
}

// syncHistoryLine is sync's line about a flush's result res (err).
func syncHistoryLine(res postgres.FlushResult, err error, where string, out map[string]any) (map[string]any, string) {
	switch {
	case err != nil:
		out["error"] = err.Error()
		return out, fmt.Sprintf("history: not pushed: %s", err)
	case res.Busy:
		out["busy"] = true
		return out, fmt.Sprintf("history: another process is pushing to %s; it takes every transition so far", where)
	case res.Events == 0:
		return out, fmt.Sprintf("history: %s has every transition", where)
	}
	out["commit"] = res.Commit
	return out, fmt.Sprintf("history: pushed %d transitions to %s (%s)", res.Events, where, res.Commit[:min(12, len(res.Commit))])
}

// defaultHistory is the remote a new PostgreSQL board's history goes to:
// origin if the board is in a clone that has it, else the clone's only
// remote; "" if none (no history).
func defaultHistory(dir string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	repo, err := gitx.Find(ctx, dir)
	if err != nil {
		return ""
	}
	out, err := repo.Run(ctx, "remote")
	if err != nil {
		return ""
	}
	remotes := strings.Fields(out)
	for _, rm := range remotes {
		if rm == "origin" {
			return rm
		}
	}
	if len(remotes) == 1 {
		return remotes[0]
	}
	return ""
}

// initHistory is init --shared postgres://…'s part: unless config.yaml
// says, the history goes to the clone's remote. It returns what to print.
func (r *run) initHistory(b *sessions.Board) (string, error) {
	cfg, err := b.Config()
	if err != nil {
		return "", err
	}
	if cfg.History == "" {
		rm := defaultHistory(b.Dir)
		if rm == "" {
			return "history: none (the board is not in a git clone with a remote; set history: REMOTE in config.yaml to keep it in git)", nil
		}
		if err := appendConfig(b, "history: "+rm+"\n"); err != nil {
			return "", err
		}
		cfg.History = rm
	}
	every, on := historyOn(&cfg)
	if !on {
		return "history: off (history: off in config.yaml)", nil
	}
	return fmt.Sprintf("history: to %s %s, one push at most every %s", cfg.History, historyBranch(&cfg), shortDur(every)), nil
}

// shortDur writes d as a user would: 1m, 90s, 2h.
func shortDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// printHistoryStatus is status's line about the history (a PostgreSQL
// board only).
func (r *run) printHistoryStatus(b *sessions.Board) {
	pg := r.shared.pgBoard()
	if pg == nil {
		return
	}
	cfg := r.shared.config()
	every, on := historyOn(cfg)
	if !on {
		why := "not in git: set history: REMOTE in config.yaml (the git remote whose board branch keeps it)"
		if cfg != nil && cfg.History == "off" {
			why = "off (history: off in config.yaml)"
		}
		r.printf("history: %s\n", why)
		return
	}
	line := fmt.Sprintf("history: to %s %s every %s", cfg.History, historyBranch(cfg), shortDur(every))
	info, err := pg.HistoryInfo()
	switch {
	case err != nil:
		line += fmt.Sprintf(" (cannot read it: %s)", err)
	case info.PushedAt == "":
		line += fmt.Sprintf(": nothing pushed yet, %d transitions waiting", info.Pending)
	default:
		line += fmt.Sprintf(": last push %s ago, %d transitions waiting", (time.Duration(info.PushedAgo) * time.Millisecond).Round(time.Second), info.Pending)
	}
	r.printf("%s\n", sanitize(line))
	if last := lastHistoryLog(b); last != "" {
		r.printf("  %s\n", sanitize(last))
	}
	if data, err := fsx.ReadRegular(filepath.Join(b.RuntimeDir(), historyErrorFile)); err == nil {
		r.printf("  last push from this board failed: %s\n", sanitize(strings.TrimSpace(string(data))))
	} else if !errors.Is(err, os.ErrNotExist) {
		return
	}
}
