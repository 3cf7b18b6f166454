package gitremote

// A board shared through a git remote's board branch (pickup init
// --shared [REMOTE]): the steps a front end takes before or without an
// open arbiter (arbiter.Kind). A clone that joined a shared board keeps
// knowing it (git config pickup.sharedRemote, pickup.sharedBranch,
// pickup.sharedBoard): a config.yaml that says otherwise is refused until
// a person confirms, with init --shared (put it back) or init --shared
// --follow (follow it).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/boardloc"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// Kind is a board whose ownership a git remote's board branch decides.
type Kind struct{}

var _ arbiter.Kind = Kind{}

// refused is a step refused before it changed anything (exit 2), with
// what to do instead.
func refused(err error, fix string) error {
	return &arbiter.Advice{Err: err, Fix: fix + "; nothing was changed", Code: 2}
}

// OpenBoard opens the board branch remote/branch of b as o says (its git
// commands bounded by the network deadline and relayed by the proxy).
func OpenBoard(ctx context.Context, b *sessions.Board, remote, branch string, cfg sessions.Config, o arbiter.Options) (*Board, error) {
	sb, err := Open(ctx, b, remote, branch)
	if err != nil {
		return nil, err
	}
	sb.Leases = o.Leases
	if o.GitProxy != "" {
		sb.Repo.Proxy = o.GitProxy
	}
	sb.Repo.NetTimeout = cfg.NetworkTimeout
	if o.NetTimeout > 0 {
		sb.Repo.NetTimeout = o.NetTimeout
	}
	if o.Host != "" {
		sb.Host = o.Host
	}
	return sb, nil
}

// OpenArbiter opens b's board branch (config.yaml's shared: and
// shared_branch) as its arbiter, and pushes or undoes what killed
// processes of this clone queued.
func OpenArbiter(ctx context.Context, b *sessions.Board, cfg sessions.Config, o arbiter.Options) (*Arbiter, error) {
	sb, err := OpenBoard(ctx, b, cfg.Shared, cfg.SharedBranch, cfg, o)
	if err != nil {
		boardhook.ClearArbiter(b)
		return nil, &arbiter.Advice{Err: err, Code: 2,
			Fix: "a shared board (shared: in config.yaml) must be in a clone of the repository whose remote holds it; nothing was changed"}
	}
	if sb.Host == "" {
		sb.Host, _ = os.Hostname()
	}
	ga := NewArbiter(sb, cfg)
	if err := ga.FlushPending(ctx); err != nil {
		_ = ga.Close()
		return nil, err
	}
	return ga, nil
}

// findRepo is the git work tree of dir, as OpenBoard's.
func findRepo(ctx context.Context, dir string, cfg sessions.Config, o arbiter.Options) (*gitx.Repo, error) {
	repo, err := gitx.Find(ctx, dir)
	if err != nil {
		return nil, err
	}
	if o.GitProxy != "" {
		repo.Proxy = o.GitProxy
	}
	repo.NetTimeout = cfg.NetworkTimeout
	if o.NetTimeout > 0 {
		repo.NetTimeout = o.NetTimeout
	}
	return repo, nil
}

// Init is `pickup init --shared [REMOTE]` (default origin; o.Explicit: it
// was named): it records the remote in config.yaml and in the clone's
// git config, and creates the board branch or joins the one there.
// o.Follow is --follow.
func (Kind) Init(ctx context.Context, b *sessions.Board, remote string, o arbiter.Options) (arbiter.Report, error) {
	if remote == "" {
		remote = "origin"
	}
	cfg, err := b.Config()
	if err != nil {
		return arbiter.Report{}, err
	}
	repo, err := findRepo(ctx, b.Dir, cfg, o)
	if err != nil {
		return arbiter.Report{}, refused(err, "a shared board lives in a git clone: run pickup init --shared inside one")
	}
	if _, err := repo.Run(ctx, "remote", "get-url", remote); err != nil {
		return arbiter.Report{}, refused(fmt.Errorf("init --shared: no remote %q in %s", remote, repo.Top), "name a remote of this clone (`git remote -v` lists them): pickup init --shared NAME")
	}
	id, joined := Joined(repo, b.Dir)
	if o.Follow {
		return follow(ctx, b, repo, id, joined, o)
	}
	branch := cfg.SharedBranch
	switch {
	case joined && o.Explicit && remote != id.Remote:
		return arbiter.Report{}, refused(fmt.Errorf("init --shared %s: this clone joined %s (git config pickup.sharedRemote)", remote, id), "run `pickup init --shared --follow` to follow what config.yaml on the board branch says")
	case joined:
		// Put back what the clone joined, whatever config.yaml says now.
		remote, branch = id.Remote, id.Branch
	case cfg.Shared != "" && cfg.Shared != remote:
		return arbiter.Report{}, refused(fmt.Errorf("init --shared %s: the board is shared through %s already (config.yaml)", remote, cfg.Shared), "edit shared: in config.yaml if the remote was renamed")
	}
	if branch == "" {
		branch = DefaultBranch
	}
	if err := sessions.ValidBoardBranch(branch); err != nil {
		return arbiter.Report{}, refused(fmt.Errorf("init --shared: %w", err), "write shared_branch: pickup in config.yaml (a branch of its own)")
	}
	if err := setSharedConfig(b, cfg, remote, branch); err != nil {
		return arbiter.Report{}, err
	}
	sb, err := OpenBoard(ctx, b, remote, branch, cfg, o)
	if err != nil {
		return arbiter.Report{}, err
	}
	if err := sb.NotCodeBranch(); err != nil {
		return arbiter.Report{}, refused(err, "write shared_branch: pickup in config.yaml (a branch of its own)")
	}
	boardhook.ClearArbiter(b) // joining is not a transition
	n, created, err := sb.Join(ctx)
	if err != nil {
		return arbiter.Report{}, err
	}
	excludeBoard(repo, b.Dir)
	verb := "joined"
	if created {
		verb = "created"
	}
	return arbiter.Report{
		JSON: map[string]any{"dir": b.Dir, "remote": remote, "branch": sb.Branch, "sessions": n, "created": created},
		Text: []string{fmt.Sprintf("shared board ready at %s: %s %s/%s (%d sessions)", b.Dir, verb, remote, sb.Branch, n)},
	}, nil
}

// follow is `pickup init --shared --follow`: a person confirms what
// config.yaml on the board branch says (not shared any more, or another
// remote or branch), and the clone follows it.
func follow(ctx context.Context, b *sessions.Board, repo *gitx.Repo, id Identity, joined bool, o arbiter.Options) (arbiter.Report, error) {
	cfg, err := b.Config()
	if err != nil {
		return arbiter.Report{}, err
	}
	if !joined {
		if cfg.Shared == "" {
			return arbiter.Report{}, refused(errors.New("init --shared --follow: this clone has not joined a shared board"), "run `pickup init --shared [REMOTE]` to join one")
		}
		id = Identity{Remote: cfg.Shared, Branch: cfg.SharedBranch}
	}
	sb, err := OpenBoard(ctx, b, id.Remote, id.Branch, cfg, o)
	if err != nil {
		return arbiter.Report{}, err
	}
	boardhook.ClearArbiter(b)
	theirs, err := sb.Follow(ctx)
	if err != nil {
		return arbiter.Report{}, err
	}
	if theirs.Shared == "" {
		return arbiter.Report{
			JSON: map[string]any{"dir": b.Dir, "shared": false},
			Text: []string{fmt.Sprintf("board at %s follows config.yaml of %s: it is no longer shared; this clone's board is its own now", b.Dir, id)},
		}, nil
	}
	branch := theirs.SharedBranch
	if branch == "" {
		branch = DefaultBranch
	}
	if _, err := repo.Run(ctx, "remote", "get-url", theirs.Shared); err != nil {
		return arbiter.Report{}, refused(fmt.Errorf("init --shared --follow: config.yaml on %s names the remote %q, which this clone does not have", id, theirs.Shared), "add it (git remote add NAME URL) and run the command again")
	}
	nb, err := OpenBoard(ctx, b, theirs.Shared, branch, cfg, o)
	if err != nil {
		return arbiter.Report{}, err
	}
	if err := nb.NotCodeBranch(); err != nil {
		return arbiter.Report{}, refused(err, "correct shared_branch in config.yaml on the board branch")
	}
	boardhook.ClearArbiter(b)
	n, _, err := nb.Join(ctx)
	if err != nil {
		return arbiter.Report{}, err
	}
	return arbiter.Report{
		JSON: map[string]any{"dir": b.Dir, "remote": theirs.Shared, "branch": branch, "sessions": n, "shared": true},
		Text: []string{fmt.Sprintf("board at %s follows config.yaml: shared through %s/%s now (%d sessions)", b.Dir, theirs.Shared, branch, n)},
	}, nil
}

// setSharedConfig makes the board's config.yaml say shared: remote (and
// shared_branch: branch unless it is the default), keeping its other
// lines.
func setSharedConfig(b *sessions.Board, cfg sessions.Config, remote, branch string) error {
	if cfg.Shared == remote && (cfg.SharedBranch == branch || cfg.SharedBranch == "" && branch == DefaultBranch) {
		return nil
	}
	path := filepath.Join(b.Dir, sessions.ConfigFile)
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.WriteFile(path, WithShared(old, remote, branch), 0o644)
}

// excludeBoard keeps a shared board's directory out of the user's git
// status (it is the board branch's checkout, kept by pickup): a line in
// the clone's own info/exclude, which is never committed.
func excludeBoard(repo *gitx.Repo, dir string) {
	rel, err := repo.Rel(dir)
	if err != nil || rel == "." || rel == "" {
		return
	}
	line := "/" + rel + "/"
	path := filepath.Join(repo.CommonDir, "info", "exclude")
	old, _ := os.ReadFile(path)
	for _, l := range strings.Split(string(old), "\n") {
		if strings.TrimSpace(l) == line {
			return
		}
	}
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	prefix := ""
	if len(old) > 0 && !strings.HasSuffix(string(old), "\n") {
		prefix = "\n"
	}
	fmt.Fprintf(f, "%s# pickup: the shared board, kept by pickup on its own branch\n%s\n", prefix, line)
}

// BeforeCommand pushes (or undoes) the transitions that processes of this
// clone queued and were killed before they saw through, before any
// command reads or changes the board: a killed done must not leave the
// clone saying done/ and the remote doing/ until an unrelated transition.
// It runs no git unless there is such a request.
func (Kind) BeforeCommand(ctx context.Context, b *sessions.Board, cfg sessions.Config, o arbiter.Options) error {
	top, ok := boardloc.MainWorktree(b.Dir)
	if !ok || !Pending(filepath.Join(top, ".git"), false) {
		return nil
	}
	sb, err := OpenBoard(ctx, b, cfg.Shared, cfg.SharedBranch, cfg, o)
	if err != nil {
		return nil // opening the arbiter says why, if the command changes anything
	}
	arb := boardhook.ArbiterOf[sessions.Event](b)
	defer boardhook.SetArbiter(b, arb)
	return sb.Flush(ctx)
}

// BeatDue: a hook starts a detached heartbeat when this clone last pushed
// owner's more than every ago (one stat).
func (Kind) BeatDue(dir, owner string, every time.Duration, now time.Time) bool {
	return BeatDue(dir, owner, every, now)
}

// TransitionsBeat: a transition pushes no heartbeat ref.
func (Kind) TransitionsBeat() bool { return false }

// ViewsFresh: a fetch is not cheap, so a view shows the last one.
func (Kind) ViewsFresh() bool { return false }

// HoldsLocks: named locks stay on each machine (a lock does not fetch).
func (Kind) HoldsLocks() bool { return false }

// Findings are doctor's findings about a shared board: config.yaml no
// longer saying what the clone joined, a board branch that a person
// rewrote (the sessions it lost) or deleted, sessions here that differ
// from the remote's tip. It fetches the board branch (and applies
// nothing).
func (Kind) Findings(ctx context.Context, b *sessions.Board, cfg sessions.Config, o arbiter.Options) []sessions.Finding {
	cfgPath := filepath.Join(b.Dir, sessions.ConfigFile)
	finding := func(id, msg string) sessions.Finding {
		return sessions.Finding{Kind: "shared", ID: id, Path: cfgPath, Message: msg}
	}
	sb, err := OpenBoard(ctx, b, cfg.Shared, cfg.SharedBranch, cfg, o)
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

// Repair is `pickup sync --repair`: it replays onto the board branch what
// a rewrite lost (or makes a deleted one again), then puts the sessions
// here where the remote has them. Its report comes with its error, if the
// board is still not in line after.
func (Kind) Repair(ctx context.Context, b *sessions.Board, cfg sessions.Config, o arbiter.Options) (arbiter.Report, error) {
	sb, err := OpenBoard(ctx, b, cfg.Shared, cfg.SharedBranch, cfg, o)
	if err != nil {
		return arbiter.Report{}, err
	}
	if err := sb.CheckIdentity(ctx, cfg, filepath.Join(b.Dir, sessions.ConfigFile)); err != nil {
		return arbiter.Report{}, IdentityRefusal(b, err)
	}
	boardhook.ClearArbiter(b) // the repair's moves are not transitions
	rep, err := sb.Repair(ctx)
	if err != nil {
		return arbiter.Report{}, err
	}
	out := arbiter.Report{JSON: rep}
	say := func(format string, args ...any) { out.Text = append(out.Text, fmt.Sprintf(format, args...)) }
	switch {
	case rep.Recreated:
		say("re-created %s/%s from the most complete history this clone knows", sb.Remote, sb.Branch)
	case rep.Commit != "":
		say("repaired %s/%s: replayed the transitions of %d session(s) that the remote had lost (commit %.12s)", sb.Remote, sb.Branch, len(rep.Lost), rep.Commit)
	}
	for _, l := range rep.Lost {
		say("  %s: now %s (lost: %s)", l.ID, orNowhere(l.Now), strings.Join(l.Events, ", "))
	}
	for _, c := range rep.Conflicts {
		say("  both moved %s", c)
	}
	for _, d := range rep.Undone {
		say("  put back where the remote has it: %s", d.String())
	}
	diffs, err := sb.InLine(ctx)
	if err != nil {
		return out, err
	}
	if len(diffs) > 0 {
		return out, &NotInLineError{Remote: sb.Remote, Branch: sb.Branch, Diffs: diffs}
	}
	say("shared board: in line with %s/%s", sb.Remote, sb.Branch)
	return out, nil
}

func orNowhere(s string) string {
	if s == "" {
		return "nowhere"
	}
	return s
}

// NotSharedHere refuses a board whose config.yaml says it is not shared
// in a clone that joined it as a shared board. It runs no git: the
// clone's git config file is read directly, and only when the board is in
// a git work tree.
func NotSharedHere(b *sessions.Board, cfg sessions.Config) error {
	top, ok := boardloc.MainWorktree(b.Dir)
	if !ok {
		return nil
	}
	id, ok := ReadIdentity(filepath.Join(top, ".git"))
	if !ok {
		return nil
	}
	if id.Board != "" && !sameDir(filepath.Join(top, filepath.FromSlash(id.Board)), b.Dir) {
		return nil // another board of this repository
	}
	return &IdentityError{Want: id, Got: cfg, Path: filepath.Join(b.Dir, sessions.ConfigFile)}
}

// sameDir reports whether a and b are one directory.
func sameDir(a, b string) bool {
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}
