package postgres

// The history of a PostgreSQL board in git (history.go) as the commands
// see it: config.yaml's `history: REMOTE` names the git remote whose board
// branch (shared_branch, default "pickup") gets the transitions in
// batches, at most one push every history_every (default 1m). The command
// that finds a push due starts the pusher (Options.OnHistoryDue: pickup's
// commands start a detached `pickup pg-history`, which calls PushHistory),
// so claims never wait for git; `pickup sync` pushes at once.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/arbiter/dburl"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// historyErrorFile, in the board's runtime folder, holds the last
// background push's failure (removed when one succeeds), for status.
const historyErrorFile = "pg-history.err"

// historyDefaultBranch is the remote's branch that gets the history when
// config.yaml names none: a git-shared board's default (gitremote's
// DefaultBranch), so that one remote keeps one board branch.
const historyDefaultBranch = "pickup"

// defaultHistoryEvery is the batch interval when config.yaml sets no
// history_every: one push a minute stays under what hosted remotes allow
// (GitHub recommends at most 6 pushes a minute per repository).
const defaultHistoryEvery = time.Minute

// historyOn reports whether cfg sends a PostgreSQL board's history to
// git, and how often at most.
func historyOn(cfg *sessions.Config) (time.Duration, bool) {
	if cfg == nil || cfg.History == "" || cfg.History == "off" {
		return 0, false
	}
	if cfg.HistoryEvery > 0 {
		return cfg.HistoryEvery, true
	}
	return defaultHistoryEvery, true
}

// historyBranch is the remote's branch that gets the history.
func historyBranch(cfg *sessions.Config) string {
	if cfg.SharedBranch != "" {
		return cfg.SharedBranch
	}
	return historyDefaultBranch
}

// historyOptions are the history options of a board in dir opened with
// cfg: none unless the front end pushes history.
func historyOptions(cfg *sessions.Config, dir string, o arbiter.Options) Options {
	every, on := historyOn(cfg)
	if !on || o.OnHistoryDue == nil {
		return Options{}
	}
	return Options{HistoryEvery: every, OnHistoryDue: func() { o.OnHistoryDue(dir) }}
}

// historyTarget is where b's history goes: the git clone b is in, the
// remote config.yaml names and its board branch.
func historyTarget(ctx context.Context, b *sessions.Board, cfg *sessions.Config, o arbiter.Options) (History, error) {
	repo, err := gitx.Find(ctx, b.Dir)
	if err != nil {
		return History{}, fmt.Errorf("history: %s is not in a git clone (history: %s in config.yaml): %w", b.Dir, cfg.History, err)
	}
	repo.Proxy = o.GitProxy
	if o.NetTimeout > 0 {
		repo.NetTimeout = o.NetTimeout
	}
	return History{Repo: repo, Remote: cfg.History, Branch: historyBranch(cfg), Leader: Leader()}, nil
}

// flushHistory pushes b's history now, as the one pusher (waiting up to
// wait for another), through pg if open, else a connection of its own.
func flushHistory(b *sessions.Board, pg *Board, cfg *sessions.Config, o arbiter.Options, every, wait time.Duration) (FlushResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait+5*time.Minute)
	defer cancel()
	h, err := historyTarget(ctx, b, cfg, o)
	if err != nil {
		return FlushResult{}, err
	}
	if pg == nil {
		if pg, err = OpenWith(ctx, b, cfg.Shared, Options{NetworkTimeout: netTimeout(*cfg, o)}); err != nil {
			return FlushResult{}, err
		}
		pg.Leases = o.Leases
		defer pg.Close()
		boardhook.ClearArbiter(b)
	}
	h.OnRewind = func(dropped string, repushed int) {
		logHistory(b, rewoundLine(dropped, repushed, cfg.History+" "+historyBranch(cfg)))
	}
	return pg.Flush(ctx, h, every, true, wait)
}

// PushHistory is the detached pusher's work (`pickup pg-history`): one
// batch of b's history, if config.yaml sends it to git. Its failure is
// kept in the board's runtime folder, for status, and returned.
func PushHistory(b *sessions.Board, cfg sessions.Config, o arbiter.Options) error {
	every, on := historyOn(&cfg)
	if !dburl.IsURL(cfg.Shared) || !on {
		return nil
	}
	_, err := flushHistory(b, nil, &cfg, o, every, 0)
	errPath := filepath.Join(b.RuntimeDir(), historyErrorFile)
	if err != nil {
		_ = os.MkdirAll(b.RuntimeDir(), 0o755)
		_ = fsx.WriteReplace(errPath, []byte(time.Now().UTC().Format(time.RFC3339)+" "+err.Error()+"\n"), 0o644, false)
		return err
	}
	_ = os.Remove(errPath)
	return nil
}

// syncHistory is pickup sync's part: push the history now. It returns
// what to print, and a failure as a line (sync's own work is done).
func syncHistory(pg *Board, cfg *sessions.Config, o arbiter.Options) (map[string]any, []string) {
	every, on := historyOn(cfg)
	if !on {
		return nil, nil
	}
	res, err := flushHistory(pg.B, pg, cfg, o, every, time.Minute)
	where := cfg.History + " " + historyBranch(cfg)
	out := map[string]any{"remote": cfg.History, "branch": historyBranch(cfg), "events": res.Events}
	var lines []string
	if res.Rewound {
		out["rewound"] = map[string]any{"dropped": res.Dropped, "repushed": res.Repushed}
		lines = append(lines, "history: "+rewoundLine(res.Dropped, res.Repushed, where))
	}
	out, line := syncHistoryLine(res, err, where, out)
	return out, append(lines, line)
}

// syncHistoryLine is sync's line about a flush's result res (err).
func syncHistoryLine(res FlushResult, err error, where string, out map[string]any) (map[string]any, string) {
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
func initHistory(b *sessions.Board) (string, error) {
	cfg, err := b.Config()
	if err != nil {
		return "", err
	}
	if cfg.History == "" {
		rm := defaultHistory(b.Dir)
		if rm == "" {
			return "history: none (the board is not in a git clone with a remote; set history: REMOTE in config.yaml to keep it in git)", nil
		}
		if err := arbiter.AppendConfig(b, "history: "+rm+"\n"); err != nil {
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

// historyStatus is status's lines about the history.
func historyStatus(b *sessions.Board, pg *Board, cfg *sessions.Config) []string {
	every, on := historyOn(cfg)
	if !on {
		why := "not in git: set history: REMOTE in config.yaml (the git remote whose board branch keeps it)"
		if cfg != nil && cfg.History == "off" {
			why = "off (history: off in config.yaml)"
		}
		return []string{"history: " + why}
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
	lines := []string{line}
	if last := lastHistoryLog(b); last != "" {
		lines = append(lines, "  "+last)
	}
	if data, err := fsx.ReadRegular(filepath.Join(b.RuntimeDir(), historyErrorFile)); err == nil {
		lines = append(lines, "  last push from this board failed: "+strings.TrimSpace(string(data)))
	} else if !errors.Is(err, os.ErrNotExist) {
		return lines
	}
	return lines
}
