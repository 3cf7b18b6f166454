package cli

// The shared board (pickup init --shared): every transition is pushed to
// the remote's board branch and stands only once the remote took it. See
// internal/shared.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/internal/pgboard"
	"github.com/pickup-dev/pickup/internal/shared"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// ExitRemote: a shared board's remote could not be reached or refused the
// push (permissions, a protected branch, a hook); nothing moved.
const ExitRemote = 8

// sharedMode attaches a shared board's arbiter to the board before the
// command changes anything. Its zero value is ready.
type sharedMode struct {
	proxy  func() string       // Repo.Proxy of the boards it opens (Env.GitProxy)
	getenv func(string) string // Env.Getenv, for $PICKUP_NETWORK_TIMEOUT
	// hostname names this machine in the heartbeats (Env.Hostname).
	hostname func() (string, error)
	// netCfg is config.yaml's network_timeout (ns): read without mu,
	// which ready holds while it opens the board.
	netCfg atomic.Int64
	mu     sync.Mutex
	cfg    *sessions.Config
	sb     *shared.Board
	pg     *pgboard.Board // a board that PostgreSQL arbitrates (pgcmds.go)
	// flushErr: flushOrphans failed (ready refuses to go on).
	flushErr error
	// trustRecent: the command claims or moves sessions (next without
	// --wait, claim, done, release, reopen), which lets ready trust a
	// fetch that another process of the clone made within sharedFresh;
	// skipped: ready did (see againAfterFetch).
	trustRecent, skipped bool
}

// sharedFresh is how recent a fetch of another process of the clone
// spares a claim or a transition its own. Well under a second: next to a
// stale period of minutes a peer's heartbeat is never judged on an old
// view, and a session made elsewhere that second is left for the next
// claim.
const sharedFresh = time.Second

// againAfterFetch is for a command whose ready trusted another process's
// fetch and that failed with err: if err is one of answers (nothing
// available, no such session, not available, not yours: an answer that
// rests on the board's content), it fetches, so that the answer is the
// remote's own, and reports whether the board changed (the command should
// try once more). Otherwise it does nothing.
func (m *sharedMode) againAfterFetch(err error, answers ...error) (bool, error) {
	if err == nil || !slices.ContainsFunc(answers, func(a error) bool { return errors.Is(err, a) }) {
		return false, nil
	}
	m.mu.Lock()
	sb, skipped := m.sb, m.skipped
	m.skipped = false
	m.mu.Unlock()
	if sb == nil || !skipped {
		return false, nil
	}
	return sb.Refresh(context.Background())
}

func (m *sharedMode) useConfig(cfg sessions.Config) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cfg = &cfg
	m.netCfg.Store(int64(cfg.NetworkTimeout))
}

// ready makes b's transitions go through the remote if config.yaml says
// `shared: REMOTE`, after bringing the board in line with the remote (one
// fetch; a claim or a transition trusts one that another process of the
// clone made within sharedFresh): a session made or moved in another
// clone is seen here first.
func (m *sharedMode) ready(b *sessions.Board) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cfg == nil || m.sb != nil || m.pg != nil {
		return nil
	}
	if m.flushErr != nil {
		return m.flushErr
	}
	if m.cfg.Shared == "" {
		// Not shared, says config.yaml; unless the clone joined a
		// shared board (its git config says so) and the file was lost.
		return notSharedHere(b, *m.cfg)
	}
	if pgboard.IsURL(m.cfg.Shared) {
		return m.readyPG(b)
	}
	ctx := context.Background()
	sb, err := m.open(ctx, b, m.cfg.Shared, m.cfg.SharedBranch)
	if err != nil {
		return refuse(err, "a shared board (shared: in config.yaml) must be in a clone of the repository whose remote holds it")
	}
	if err := sb.CheckIdentity(ctx, *m.cfg, filepath.Join(b.Dir, sessions.ConfigFile)); err != nil {
		b.Arbiter = nil
		return identityRefusal(b, err)
	}
	if m.trustRecent && sb.FetchedWithin(sharedFresh) {
		// A claim or a transition needs no fetch to be right: the push is
		// the compare-and-swap, and a refused one fetches. Another process
		// of this clone fetched a moment ago, so the board here is at most
		// that old; an answer that rests on it alone ("nothing
		// available", no such session) fetches first (againAfterFetch).
		m.sb, m.skipped = sb, true
		return nil
	}
	if _, err := sb.Refresh(ctx); err != nil {
		b.Arbiter = nil
		if errors.Is(err, shared.ErrNoBoardBranch) {
			return &remoteFailure{err: err, hint: fmt.Sprintf("run `pickup init --shared %s` in one clone to put the board on the remote; nothing was changed", m.cfg.Shared)}
		}
		return err
	}
	m.sb = sb
	return nil
}

// open opens the shared board of b, its git commands relayed by the git
// proxy.
func (m *sharedMode) open(ctx context.Context, b *sessions.Board, remote, branch string) (*shared.Board, error) {
	timeout, err := m.netTimeout()
	if err != nil {
		return nil, err
	}
	sb, err := shared.Open(ctx, b, remote, branch)
	if err != nil {
		return nil, err
	}
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

// board returns the shared board, or nil if the board is not shared (or
// ready has not run).
func (m *sharedMode) board() *shared.Board {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sb
}

// heartbeat pushes owner's heartbeat ref on a shared board, at most once
// per a quarter of the stale period, so that other clones do not reap a
// live owner of this machine. A failure is a warning: the claim stands.
func (r *run) sharedHeartbeat(owner string, force bool) {
	if pg := r.shared.pgBoard(); pg != nil {
		if err := pg.Beat(owner); err != nil {
			fmt.Fprintf(r.env.Stderr, "pickup: warning: %s\n", sanitize(err.Error()))
		}
		return
	}
	sb := r.shared.board()
	if sb == nil {
		return
	}
	every := 0 * time.Second
	if !force {
		every = beatEvery(r.shared.cfg)
	}
	if _, err := sb.Heartbeat(context.Background(), owner, every); err != nil {
		fmt.Fprintf(r.env.Stderr, "pickup: warning: %s\n", sanitize(err.Error()))
	}
}

// sharedPoll fetches a shared board every shared_fetch (default 10 s)
// until ctx ends, so that next --wait wakes for sessions made or released
// in other clones: applying the fetch writes them into todo/, which the
// wait watches. It returns a function that stops it.
func (r *run) sharedPoll(ctx context.Context) func() {
	if pg := r.shared.pgBoard(); pg != nil {
		return r.pgPoll(ctx, pg)
	}
	sb := r.shared.board()
	if sb == nil {
		return func() {}
	}
	every := shared.DefaultFetch
	if r.shared.cfg != nil && r.shared.cfg.SharedFetch > 0 {
		every = r.shared.cfg.SharedFetch
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := sb.Refresh(ctx); err != nil && ctx.Err() == nil {
					fmt.Fprintf(r.env.Stderr, "pickup: warning: %s\n", sanitize(err.Error()))
				}
			}
		}
	}()
	return func() { cancel(); <-done }
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

// initShared is `pickup init --shared [REMOTE]`.
func (r *run) initShared(c *ucli.Context) error {
	if c.NArg() > 1 {
		return usageError("init --shared takes at most one argument, the remote (default: the one this clone joined, else origin)")
	}
	remote := "origin"
	if c.NArg() == 1 {
		remote = c.Args().First()
	}
	if pgboard.IsURL(remote) {
		return r.initPG(remote)
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
	id, joined := shared.Joined(repo, b.Dir)
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
		branch = shared.DefaultBranch
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
	b.Arbiter = nil // joining is not a transition
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
func appendConfig(b *sessions.Board, line string) error {
	path := filepath.Join(b.Dir, sessions.ConfigFile)
	old, err := fsx.ReadRegular(path)
	if err != nil && !isNotExist(err) {
		return err
	}
	if len(old) > 0 && !strings.HasSuffix(string(old), "\n") {
		line = "\n" + line
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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

// isShared reports whether the board's config.yaml says shared:.
func (m *sharedMode) isShared() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg != nil && m.cfg.Shared != ""
}

// syncShared is `pickup sync` on a shared board: every transition is on
// the remote already, so it only brings the board in line with it (one
// fetch).
func (r *run) syncShared(b *sessions.Board, repair bool) error {
	if repair {
		return r.repairShared(b)
	}
	if err := r.shared.ready(b); err != nil {
		return err
	}
	if pg := r.shared.pgBoard(); pg != nil {
		return r.syncPG(pg)
	}
	sb := r.shared.board()
	diffs, err := sb.InLine(context.Background())
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		return &notInLine{remote: sb.Remote, branch: sb.Branch, diffs: diffs}
	}
	if r.json {
		return r.printJSON(map[string]any{"remote": sb.Remote, "branch": sb.Branch, "shared": true})
	}
	r.printf("shared board: in line with %s/%s (every transition is pushed as it happens)\n", sb.Remote, sb.Branch)
	return nil
}

// sharedSettle completes a transition's error on a shared board: a session
// that another process of this clone moved first is named with where the
// remote has it once that process's push is settled, so that a loser
// names the winner at the remote, not a local racer that lost there too.
func (r *run) sharedSettle(err error) error {
	sb := r.shared.board()
	var e *claim.Error
	if sb == nil || !errors.As(err, &e) || e.Arbiter || !errors.Is(err, claim.ErrSessionNotAvailable) || e.Holder == "" {
		return err
	}
	if st, owner, ok := sb.Settled(context.Background(), e.ID, 30*time.Second); ok {
		e.State, e.Holder = st, owner
	}
	return err
}
