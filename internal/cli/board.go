package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// DefaultBoardDir is the board's place inside a repository or directory.
const DefaultBoardDir = ".spx/sessions"

// boardDir finds the board: --dir, else $PICKUP_DIR, else .spx/sessions at
// the top of the enclosing git repository's main work tree (so that every
// linked worktree shares one board), else ./.spx/sessions.
func (r *run) boardDir() (string, error) {
	if r.dirSet {
		if r.dir == "" {
			return "", usageError("--dir is empty: give the board directory, or leave --dir out to use the default")
		}
		return r.dir, nil
	}
	if d := r.env.Getenv("PICKUP_DIR"); d != "" {
		return d, nil
	}
	wd, err := r.env.Getwd()
	if err != nil {
		return "", err
	}
	if top, ok := mainWorktree(wd); ok {
		return filepath.Join(top, DefaultBoardDir), nil
	}
	return filepath.Join(wd, DefaultBoardDir), nil
}

// mainWorktree returns the top of the main work tree of the git repository
// enclosing dir, reading .git files the way git does instead of running git
// on every call. In a linked worktree .git is a file "gitdir: <path>" whose
// directory has a "commondir" file pointing at the main repository's .git.
func mainWorktree(dir string) (string, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		info, err := os.Stat(dotgit)
		if err == nil {
			if info.IsDir() {
				return d, true
			}
			return fromGitFile(d, dotgit)
		}
		if parent := filepath.Dir(d); parent == d {
			return "", false
		}
	}
}

func fromGitFile(worktree, dotgit string) (string, bool) {
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return "", false
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return "", false
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(worktree, gitdir)
	}
	common := gitdir
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common = strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
	} else {
		// A submodule: its .git file points at its own repository.
		return worktree, true
	}
	common = filepath.Clean(common)
	if filepath.Base(common) == ".git" {
		return filepath.Dir(common), true
	}
	// A bare main repository: keep the board beside the worktree.
	return worktree, true
}

// openBoard opens the board with open (sessions.Open, which refuses a link
// or pipe inside it with exit 2 and its name, or sessions.Inspect, which
// lets doctor report them), failing with a hint to run pickup init. It does
// not check config.yaml: most commands use board (configcheck.go).
//
// inspectBoard is openBoard for doctor.
func (r *run) inspectBoard() (*sessions.Board, error) { return r.openBoard(sessions.Inspect) }

func (r *run) openBoard(open func(string) (*sessions.Board, error)) (*sessions.Board, error) {
	dir, err := r.boardDir()
	if err != nil {
		return nil, err
	}
	b, err := open(dir)
	if err != nil {
		return nil, err
	}
	b.NoSync = r.noSync
	b.Now = r.env.Now
	if err := r.commits.attach(b, r.commit, r.env.Getenv); err != nil {
		return nil, err
	}
	b.OnEvent = r.commits.hook(b)
	return b, nil
}

// ownerName resolves the owner: --owner, $PICKUP_OWNER,
// $CLAUDE_CODE_SESSION_ID (set by Claude Code itself for the commands of
// each session, a fork's its own), $CLAUDE_SESSION_ID (exported by pickup's
// SessionStart hook), $CODEX_THREAD_ID, else the Claude Code session that
// pickup's SessionStart hook recorded for the invoking process, else
// user@host (made a valid owner name).
func (r *run) ownerName() (string, error) {
	if r.ownerSet || r.owner != "" {
		return r.owner, sessions.ValidateOwner(r.owner)
	}
	for _, v := range []string{"PICKUP_OWNER", "CLAUDE_CODE_SESSION_ID", "CLAUDE_SESSION_ID", "CODEX_THREAD_ID"} {
		if o := r.env.Getenv(v); o != "" {
			if err := sessions.ValidateOwner(o); err != nil {
				return "", fmt.Errorf("$%s: %w", v, err)
			}
			r.owner = o
			return o, nil
		}
	}
	if o, ok := r.claudeOwner(); ok {
		r.owner = o
		return o, nil
	}
	user := r.env.Getenv("USER")
	if user == "" {
		user = r.env.Getenv("LOGNAME")
	}
	if user == "" {
		user = "user"
	}
	host, err := r.env.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	host, _, _ = strings.Cut(host, ".")
	r.owner = sessions.SanitizeOwner(user + "@" + host)
	return r.owner, nil
}

// client opens the board and returns a claim client for the owner, ready
// to change the board (see readyToChange).
func (r *run) client() (*claim.Client, error) {
	b, err := r.board()
	if err != nil {
		return nil, err
	}
	if err := r.readyToChange(b); err != nil {
		return nil, err
	}
	owner, err := r.ownerName()
	if err != nil {
		return nil, err
	}
	return claim.New(b, owner)
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
