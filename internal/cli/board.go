package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/boardloc"
	"github.com/pickup-dev/pickup/internal/claimhook"
	"github.com/pickup-dev/pickup/sessions"
)

// DefaultBoardDir is the board's place inside a repository or directory.
const DefaultBoardDir = boardloc.DefaultDir

// boardDir finds the board: --dir, else $PICKUP_DIR, else .spx/sessions at
// the top of the enclosing git repository's main work tree, else
// ./.spx/sessions (boardloc, which pickup mcp shares).
func (r *run) boardDir() (string, error) {
	var wd string
	if !r.dirSet && r.env.Getenv("PICKUP_DIR") == "" {
		var err error
		if wd, err = r.env.Getwd(); err != nil { // only when it is needed
			return "", err
		}
	}
	dir, err := boardloc.Find(r.dir, r.dirSet, r.env.Getenv, wd)
	if errors.Is(err, boardloc.ErrEmptyDir) {
		return "", usageError("%s", err)
	}
	return dir, err
}

// mainWorktree is boardloc.MainWorktree: the top of the main work tree of
// the git repository enclosing dir.
func mainWorktree(dir string) (string, bool) { return boardloc.MainWorktree(dir) }

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
	cl, err := claim.New(b, owner)
	if err != nil {
		return nil, err
	}
	// On a shared board the client runs its arbiter steps (answer again,
	// name the winner, keep a wait in line) through the arbiter ready just
	// attached and brought the board in line with: the library's steps,
	// not a copy of them here.
	if a := r.shared.arbiter(); a != nil {
		claimhook.LendArbiter(cl, a, true, func(err error) {
			fmt.Fprintf(r.env.Stderr, "pickup: warning: %s\n", sanitize(err.Error()))
		})
	}
	return cl, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
