package cli

// What every command that talks to a shared board's arbiter shares: the
// network deadline ($PICKUP_NETWORK_TIMEOUT, else config.yaml's
// network_timeout) and the exit code of an arbiter that failed.

import (
	"context"
	"path/filepath"
	"time"

	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// ExitRemote: a shared board's remote could not be reached or refused the
// push (permissions, a protected branch, a hook); nothing moved.
const ExitRemote = 8

// configPath is b's config.yaml.
func configPath(b *sessions.Board) string { return filepath.Join(b.Dir, sessions.ConfigFile) }

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
