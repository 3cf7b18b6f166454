package cli

// A clone that joined a shared board keeps knowing it (git config
// pickup.sharedRemote, pickup.sharedBranch, pickup.sharedBoard): a
// config.yaml that says otherwise, deleted or edited here or on the board
// branch, is refused until a person confirms, with pickup init --shared
// (put it back) or pickup init --shared --follow (follow it).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pickup-dev/pickup/internal/arbiter/gitremote"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// notSharedHere refuses a board whose config.yaml says it is not shared
// in a clone that joined it as a shared board. It runs no git: the
// clone's git config file is read directly, and only when the board is in
// a git work tree.
func notSharedHere(b *sessions.Board, cfg sessions.Config) error {
	top, ok := mainWorktree(b.Dir)
	if !ok {
		return nil
	}
	id, ok := gitremote.ReadIdentity(filepath.Join(top, ".git"))
	if !ok {
		return nil
	}
	if id.Board != "" && !sameDir(filepath.Join(top, filepath.FromSlash(id.Board)), b.Dir) {
		return nil // another board of this repository
	}
	return &gitremote.IdentityError{Want: id, Got: cfg, Path: filepath.Join(b.Dir, sessions.ConfigFile)}
}

// sameDir reports whether a and b are one directory.
func sameDir(a, b string) bool {
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}

// setSharedConfig makes the board's config.yaml say shared: remote (and
// shared_branch: branch unless it is the default), keeping its other
// lines.
func setSharedConfig(b *sessions.Board, cfg sessions.Config, remote, branch string) error {
	if cfg.Shared == remote && (cfg.SharedBranch == branch || cfg.SharedBranch == "" && branch == gitremote.DefaultBranch) {
		return nil
	}
	path := filepath.Join(b.Dir, sessions.ConfigFile)
	old, err := os.ReadFile(path)
	if err != nil && !isNotExist(err) {
		return err
	}
	return os.WriteFile(path, gitremote.WithShared(old, remote, branch), 0o644)
}

// followShared is `pickup init --shared --follow`: a person confirms
// what config.yaml on the board branch says (not shared any more, or
// another remote or branch), and the clone follows it.
func (r *run) followShared(b *sessions.Board, repo *gitx.Repo, id gitremote.Identity, joined bool) error {
	ctx := context.Background()
	if !joined {
		cfg, err := b.Config()
		if err != nil {
			return err
		}
		if cfg.Shared == "" {
			return refuse(errors.New("init --shared --follow: this clone has not joined a shared board"), "run `pickup init --shared [REMOTE]` to join one")
		}
		id = gitremote.Identity{Remote: cfg.Shared, Branch: cfg.SharedBranch}
	}
	sb, err := r.shared.open(ctx, b, id.Remote, id.Branch)
	if err != nil {
		return err
	}
	boardhook.ClearArbiter(b)
	cfg, err := sb.Follow(ctx)
	if err != nil {
		return err
	}
	if cfg.Shared == "" {
		if r.json {
			return r.printJSON(map[string]any{"dir": b.Dir, "shared": false})
		}
		r.printf("board at %s follows config.yaml of %s: it is no longer shared; this clone's board is its own now\n", b.Dir, id)
		return nil
	}
	branch := cfg.SharedBranch
	if branch == "" {
		branch = gitremote.DefaultBranch
	}
	if _, err := repo.Run(ctx, "remote", "get-url", cfg.Shared); err != nil {
		return refuse(fmt.Errorf("init --shared --follow: config.yaml on %s names the remote %q, which this clone does not have", id, cfg.Shared), "add it (git remote add NAME URL) and run the command again")
	}
	nb, err := r.shared.open(ctx, b, cfg.Shared, branch)
	if err != nil {
		return err
	}
	if err := nb.NotCodeBranch(); err != nil {
		return refuse(err, "correct shared_branch in config.yaml on the board branch")
	}
	boardhook.ClearArbiter(b)
	n, _, err := nb.Join(ctx)
	if err != nil {
		return err
	}
	if r.json {
		return r.printJSON(map[string]any{"dir": b.Dir, "remote": cfg.Shared, "branch": branch, "sessions": n, "shared": true})
	}
	r.printf("board at %s follows config.yaml: shared through %s/%s now (%d sessions)\n", b.Dir, cfg.Shared, branch, n)
	return nil
}

// beforeCommand pushes (or undoes) the transitions that processes of this
// clone queued and were killed before they saw through, before any
// command reads or changes the board: a killed done must not leave the
// clone saying done/ and the remote doing/ until an unrelated transition.
// It runs no git unless there is such a request.
func (gitKind) beforeCommand(m *sharedMode, b *sessions.Board, cfg sessions.Config) error {
	top, ok := mainWorktree(b.Dir)
	if !ok || !gitremote.Pending(filepath.Join(top, ".git"), false) {
		return nil
	}
	ctx := context.Background()
	sb, err := m.open(ctx, b, cfg.Shared, cfg.SharedBranch)
	if err != nil {
		return nil // ready says why, if the command changes anything
	}
	arbiter := boardhook.ArbiterOf[sessions.Event](b)
	defer boardhook.SetArbiter(b, arbiter)
	return sb.Flush(ctx)
}

// notShared refuses a command that would treat the board as a board of
// this clone only (sync of the code branch) when the clone joined it as a
// shared board and config.yaml lost that.
func (m *sharedMode) notShared(b *sessions.Board) error {
	m.mu.Lock()
	cfg := m.cfg
	m.mu.Unlock()
	if cfg == nil {
		return nil
	}
	return notSharedHere(b, *cfg)
}

// findings are doctor's findings about a shared board: config.yaml no
// longer saying what the clone joined, a board branch that a person
// rewrote (the sessions it lost) or deleted, sessions here that differ
// from the remote's tip. It fetches the board branch (and applies
// nothing).
func (gitKind) findings(r *run, b *sessions.Board, cfg sessions.Config) []sessions.Finding {
	cfgPath := configPath(b)
	finding := func(id, msg string) sessions.Finding {
		return sessions.Finding{Kind: "shared", ID: id, Path: cfgPath, Message: msg}
	}
	ctx := context.Background()
	sb, err := r.shared.open(ctx, b, cfg.Shared, cfg.SharedBranch)
	if err != nil {
		return []sessions.Finding{finding("", err.Error())}
	}
	boardhook.ClearArbiter(b)
	if err := sb.CheckIdentity(ctx, cfg, cfgPath); err != nil {
		return []sessions.Finding{finding("", err.Error()+"; "+hintOf(err))}
	}
	var out []sessions.Finding
	lost, deleted, err := sb.Damage(ctx)
	switch {
	case err != nil:
		out = append(out, finding("", fmt.Sprintf("could not look at %s/%s: %v", sb.Remote, sb.Branch, err)))
	case deleted:
		out = append(out, finding("", fmt.Sprintf("the board branch %s/%s was deleted on the remote; this clone knows its history (%d session(s) in its last events); run `pickup sync --repair` (or `pickup init --shared`) to make it again", sb.Remote, sb.Branch, len(lost))))
	case len(lost) > 0:
		out = append(out, finding("", fmt.Sprintf("the board branch %s/%s was rewritten (a force push): it lost the transitions of %d session(s) (known to this clone, or to refs/pickup/tips/ on the remote, pickup's record of its last push); run `pickup sync --repair` to replay them onto it", sb.Remote, sb.Branch, len(lost))))
		for _, l := range lost {
			out = append(out, sessions.Finding{Kind: "shared", ID: l.ID, Path: filepath.Join(b.Dir, sessions.EventLogFile),
				Message: fmt.Sprintf("%s: the remote lost %s; the lost history has it in %s, the remote in %s", l.ID, strings.Join(l.Events, ", "), orNowhere(l.Lost), orNowhere(l.Remote))})
		}
	}
	diffs, err := sb.Differences(ctx)
	if err == nil {
		for _, d := range diffs {
			out = append(out, sessions.Finding{Kind: "shared", ID: d.ID, Path: b.Dir,
				Message: fmt.Sprintf("%s (as this clone last saw the remote); `pickup sync` pushes what this clone's processes queued, `pickup sync --repair` puts the rest where the remote has it", d)})
		}
	}
	return out
}

func hintOf(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

// repair is `pickup sync --repair` on a board shared through a git remote.
func (gitKind) repair(r *run, b *sessions.Board, cfg sessions.Config) error {
	ctx := context.Background()
	sb, err := r.shared.open(ctx, b, cfg.Shared, cfg.SharedBranch)
	if err != nil {
		return err
	}
	if err := sb.CheckIdentity(ctx, cfg, configPath(b)); err != nil {
		return gitremote.IdentityRefusal(b, err)
	}
	boardhook.ClearArbiter(b) // the repair's moves are not transitions
	rep, err := sb.Repair(ctx)
	if err != nil {
		return err
	}
	if r.json {
		return r.printJSON(rep)
	}
	switch {
	case rep.Recreated:
		r.printf("re-created %s/%s from the most complete history this clone knows\n", sb.Remote, sb.Branch)
	case rep.Commit != "":
		r.printf("repaired %s/%s: replayed the transitions of %d session(s) that the remote had lost (commit %.12s)\n", sb.Remote, sb.Branch, len(rep.Lost), rep.Commit)
	}
	for _, l := range rep.Lost {
		r.printf("  %s: now %s (lost: %s)\n", l.ID, orNowhere(l.Now), sanitize(strings.Join(l.Events, ", ")))
	}
	for _, c := range rep.Conflicts {
		r.printf("  both moved %s\n", sanitize(c))
	}
	for _, d := range rep.Undone {
		r.printf("  put back where the remote has it: %s\n", sanitize(d.String()))
	}
	diffs, err := sb.InLine(ctx)
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		return &gitremote.NotInLineError{Remote: sb.Remote, Branch: sb.Branch, Diffs: diffs}
	}
	r.printf("shared board: in line with %s/%s\n", sb.Remote, sb.Branch)
	return nil
}

func orNowhere(s string) string {
	if s == "" {
		return "nowhere"
	}
	return s
}
