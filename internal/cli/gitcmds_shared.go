package cli

// The shared board (pickup init --shared): every transition is pushed to
// the remote's board branch and stands only once the remote took it. See
// internal/arbiter/gitremote.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	arbiterapi "github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/arbiter/gitremote"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/internal/leasebook"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// ExitRemote: a shared board's remote could not be reached or refused the
// push (permissions, a protected branch, a hook); nothing moved.
const ExitRemote = 8

// gitKind is a board shared through a git remote's board branch.
type gitKind struct{}

// open attaches the remote's board branch as b's arbiter (location.Open,
// as every door does) without bringing the board in line.
func (gitKind) open(ctx context.Context, m *sharedMode, b *sessions.Board, cfg sessions.Config) (arbiter, error) {
	return m.openArbiter(ctx, b, cfg) // kinds.go
}

func (gitKind) viewsFresh() bool { return false }

func (gitKind) beatDue(dir, owner string, every time.Duration, now time.Time) bool {
	return gitremote.BeatDue(dir, owner, every, now)
}

// configPath is b's config.yaml.
func configPath(b *sessions.Board) string { return filepath.Join(b.Dir, sessions.ConfigFile) }

// open opens the shared board of b, its git commands relayed by the git
// proxy.
func (m *sharedMode) open(ctx context.Context, b *sessions.Board, remote, branch string) (*gitremote.Board, error) {
	timeout, err := m.netTimeout()
	if err != nil {
		return nil, err
	}
	sb, err := gitremote.Open(ctx, b, remote, branch)
	if err != nil {
		return nil, err
	}
	sb.Leases = leasebook.Of(b)
	if m.proxy != nil {
		sb.Repo.Proxy = m.proxy()
	}
	sb.Repo.NetTimeout = timeout
	if m.hostname != nil {
		sb.Host, _ = m.hostname()
	}
	return sb, nil
}

// netTimeoutEnv overrides config.yaml's network_timeout (for tests, and
// for one command on a slow link).
const netTimeoutEnv = "PICKUP_NETWORK_TIMEOUT"

// netTimeout is the deadline of every git command that talks to a remote:
// $PICKUP_NETWORK_TIMEOUT, else config.yaml's network_timeout, else 0
// (gitx.DefaultNetTimeout).
func (m *sharedMode) netTimeout() (time.Duration, error) {
	if m.getenv != nil {
		if v := m.getenv(netTimeoutEnv); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return 0, usageError("%s=%q is not a positive duration: set it like %s=30s, or unset it to use network_timeout in config.yaml", netTimeoutEnv, v, netTimeoutEnv)
			}
			return d, nil
		}
	}
	return time.Duration(m.netCfg.Load()), nil
}

// findRepo finds the work tree of dir, its git commands relayed by the git
// proxy and bounded by the network deadline.
func (r *run) findRepo(ctx context.Context, dir string) (*gitx.Repo, error) {
	timeout, err := r.shared.netTimeout()
	if err != nil {
		return nil, err
	}
	repo, err := gitx.Find(ctx, dir)
	if err == nil && r.env.GitProxy != nil {
		repo.Proxy = r.env.GitProxy()
	}
	if err == nil {
		repo.NetTimeout = timeout
	}
	return repo, err
}

// remoteFailure is a shared board's remote failing before anything moved.
type remoteFailure struct {
	err  error
	hint string
}

func (e *remoteFailure) Error() string { return e.err.Error() }
func (e *remoteFailure) Unwrap() error { return e.err }
func (e *remoteFailure) Hint() string  { return e.hint }
func (e *remoteFailure) ExitCode() int { return ExitRemote }

// initBoard is `pickup init --shared [REMOTE]`.
func (gitKind) initBoard(r *run, c *ucli.Context, remote string) error {
	if remote == "" {
		remote = "origin"
	}
	dir, err := r.boardDir()
	if err != nil {
		return err
	}
	b, err := sessions.Init(dir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	repo, err := r.findRepo(ctx, b.Dir)
	if err != nil {
		return refuse(err, "a shared board lives in a git clone: run pickup init --shared inside one")
	}
	if _, err := repo.Run(ctx, "remote", "get-url", remote); err != nil {
		return refuse(fmt.Errorf("init --shared: no remote %q in %s", remote, repo.Top), "name a remote of this clone (`git remote -v` lists them): pickup init --shared NAME")
	}
	cfg, err := b.Config()
	if err != nil {
		return err
	}
	r.noSync = r.noSync || b.NoSync
	id, joined := gitremote.Joined(repo, b.Dir)
	if c.Bool("follow") {
		return r.followShared(b, repo, id, joined)
	}
	branch := cfg.SharedBranch
	switch {
	case joined && c.NArg() == 1 && remote != id.Remote:
		return refuse(fmt.Errorf("init --shared %s: this clone joined %s (git config pickup.sharedRemote)", remote, id), "run `pickup init --shared --follow` to follow what config.yaml on the board branch says")
	case joined:
		// Put back what the clone joined, whatever config.yaml says now.
		remote, branch = id.Remote, id.Branch
	case cfg.Shared != "" && cfg.Shared != remote:
		return refuse(fmt.Errorf("init --shared %s: the board is shared through %s already (config.yaml)", remote, cfg.Shared), "edit shared: in config.yaml if the remote was renamed")
	}
	if branch == "" {
		branch = gitremote.DefaultBranch
	}
	if err := sessions.ValidBoardBranch(branch); err != nil {
		return refuse(fmt.Errorf("init --shared: %w", err), "write shared_branch: pickup in config.yaml (a branch of its own)")
	}
	if err := setSharedConfig(b, cfg, remote, branch); err != nil {
		return err
	}
	sb, err := r.shared.open(ctx, b, remote, branch)
	if err != nil {
		return err
	}
	if err := sb.NotCodeBranch(); err != nil {
		return refuse(err, "write shared_branch: pickup in config.yaml (a branch of its own)")
	}
	boardhook.ClearArbiter(b) // joining is not a transition
	n, created, err := sb.Join(ctx)
	if err != nil {
		return err
	}
	excludeBoard(repo, b.Dir)
	if r.json {
		return r.printJSON(map[string]any{"dir": b.Dir, "remote": remote, "branch": sb.Branch, "sessions": n, "created": created})
	}
	verb := "joined"
	if created {
		verb = "created"
	}
	r.printf("shared board ready at %s: %s %s/%s (%d sessions)\n", b.Dir, verb, remote, sb.Branch, n)
	return nil
}

// appendConfig adds a line to the board's config.yaml.
func appendConfig(b *sessions.Board, line string) error { return arbiterapi.AppendConfig(b, line) }

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
