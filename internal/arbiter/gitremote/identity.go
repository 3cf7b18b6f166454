package gitremote

// Being shared is recorded where no one deletes it by accident: the
// clone's own git config (pickup.sharedRemote, pickup.sharedBranch,
// pickup.sharedBoard), which is never committed nor fetched. config.yaml
// on the board branch says it too, for clones that join; but a fetched
// config.yaml that says otherwise (deleted, another remote, another
// branch) is refused until a person confirms: pickup init --shared puts
// the settings back, pickup init --shared --follow follows the file.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// ErrIdentity: the board's config.yaml no longer says what this clone
// joined. It matches ErrRemote too (exit 8).
var ErrIdentity = errors.New("the shared board's config.yaml does not say what this clone joined")

// Identity is what a clone joined: a remote, a branch and the board
// directory (relative to the top of the work tree).
type Identity struct{ Remote, Branch, Board string }

func (id Identity) String() string { return id.Remote + "/" + id.Branch }

// IdentityError: config.yaml (Path: the board's, or on the board branch
// at a fetched tip) says Got, and this clone joined Want.
type IdentityError struct {
	Want      Identity
	Got       sessions.Config
	Path      string
	Fetched   bool // Got is the fetched tip's config.yaml
	CodeCheck string
}

func (e *IdentityError) Error() string {
	where := "the board's config.yaml (" + e.Path + ")"
	if e.Fetched {
		where = "config.yaml on the fetched board branch " + e.Want.String()
	}
	var says string
	switch {
	case e.CodeCheck != "":
		says = e.CodeCheck
	case e.Got.Shared == "":
		says = "says the board is not shared (no shared: line, or no file)"
	default:
		says = fmt.Sprintf("says shared: %s, shared_branch: %s", e.Got.Shared, branchOr(e.Got.SharedBranch))
	}
	return fmt.Sprintf("%v: %s %s, but this clone joined %s (git config pickup.sharedRemote, pickup.sharedBranch)", ErrIdentity, where, says, e.Want)
}

func (e *IdentityError) Unwrap() []error { return []error{ErrRemote, ErrIdentity} }

// Hint names the two ways a person confirms.
func (e *IdentityError) Hint() string {
	return fmt.Sprintf("nothing was moved; if that change was a mistake, run `pickup init --shared` to put shared: %s and shared_branch: %s back (on the board branch too); if the board really stopped being shared or moved, run `pickup init --shared --follow` in each clone to follow config.yaml", e.Want.Remote, e.Want.Branch)
}

func branchOr(b string) string {
	if b == "" {
		return DefaultBranch
	}
	return b
}

// Joined reads what the clone of repo joined for the board boardDir (ok
// false: nothing, or another board of the same repository).
func Joined(repo *gitx.Repo, boardDir string) (Identity, bool) {
	id, ok := ReadIdentity(repo.CommonDir)
	if !ok {
		return Identity{}, false
	}
	if rel, err := repo.Rel(boardDir); err == nil && id.Board != "" && filepath.ToSlash(rel) != id.Board {
		return Identity{}, false
	}
	return id, true
}

// ReadIdentity reads the [pickup] section of the git config file in
// commonDir (the repository's git directory) without running git: every
// command of a board in a git work tree asks, shared or not, and it is
// what pickup wrote there itself (git config --local).
func ReadIdentity(commonDir string) (Identity, bool) {
	data, err := os.ReadFile(filepath.Join(commonDir, "config"))
	if err != nil || !strings.Contains(strings.ToLower(string(data)), "sharedremote") {
		return Identity{}, false
	}
	var id Identity
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			in = strings.EqualFold(strings.TrimSpace(strings.Trim(l, "[]")), "pickup")
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !in || !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "sharedremote":
			id.Remote = v
		case "sharedbranch":
			id.Branch = v
		case "sharedboard":
			id.Board = v
		}
	}
	if id.Remote == "" {
		return Identity{}, false
	}
	id.Branch = branchOr(id.Branch)
	return id, true
}

// Record notes in the clone's git config that it joined s.
func (s *Board) Record(ctx context.Context) error {
	rel, err := s.Repo.Rel(s.B.Dir)
	if err != nil {
		return err
	}
	for _, kv := range [][2]string{{"pickup.sharedRemote", s.Remote}, {"pickup.sharedBranch", s.Branch}, {"pickup.sharedBoard", filepath.ToSlash(rel)}} {
		if _, err := s.Repo.Run(ctx, "config", "--local", kv[0], kv[1]); err != nil {
			return fmt.Errorf("shared board: record %s: %w", kv[0], err)
		}
	}
	return nil
}

// Forget removes the clone's record of the shared board, and the refs
// that follow its branch (what the clone saw): a clone that follows
// config.yaml elsewhere starts afresh there.
func Forget(ctx context.Context, repo *gitx.Repo) {
	_, _ = repo.Run(ctx, "config", "--local", "--remove-section", "pickup")
	_, _ = repo.RunIn(ctx, []byte("delete "+refBoard+"\ndelete "+refFetched+"\n"), nil, "update-ref", "--stdin")
}

// CheckIdentity checks that cfg, the board's settings, say what the clone
// joined (when it recorded that), and that the board branch is not the
// branch checked out in the work tree.
func (s *Board) CheckIdentity(ctx context.Context, cfg sessions.Config, path string) error {
	if err := s.notCodeBranch(); err != nil {
		return err
	}
	id, ok := Joined(s.Repo, s.B.Dir)
	if !ok {
		// A clone that joined before pickup recorded it: record it now.
		if cfg.Shared == s.Remote && branchOr(cfg.SharedBranch) == s.Branch {
			_ = s.Record(ctx)
		}
		return nil
	}
	if id.Remote != cfg.Shared || id.Branch != branchOr(cfg.SharedBranch) {
		return &IdentityError{Want: id, Got: cfg, Path: path}
	}
	return nil
}

// NotCodeBranch refuses a board branch that is the work tree's current
// branch: the board's commits would land on the code.
func (s *Board) NotCodeBranch() error { return s.notCodeBranch() }

func (s *Board) notCodeBranch() error {
	data, err := os.ReadFile(filepath.Join(s.Repo.GitDir, "HEAD"))
	if err != nil {
		return nil
	}
	head, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "ref: refs/heads/")
	if ok && head == s.Branch {
		return &BranchError{Branch: s.Branch}
	}
	return nil
}

// BranchError: the board branch is the branch the work tree has checked
// out (the code's).
type BranchError struct{ Branch string }

func (e *BranchError) Error() string {
	return fmt.Sprintf("shared_branch: %s is the branch checked out in this work tree: the board needs a branch of its own, never the code's", e.Branch)
}

// checkFetchedConfig refuses a fetched config.yaml (present false:
// deleted) that does not say this board.
func (s *Board) checkFetchedConfig(data []byte, present bool) error {
	if s.acceptConfig {
		return nil
	}
	var cfg sessions.Config
	if present {
		var err error
		if cfg, err = sessions.ParseConfig(sessions.ConfigFile+" on "+s.Remote+"/"+s.Branch, data); err != nil {
			return &IdentityError{Want: Identity{Remote: s.Remote, Branch: s.Branch}, Fetched: true, CodeCheck: "is not valid (" + err.Error() + ")"}
		}
	}
	if cfg.Shared != s.Remote || branchOr(cfg.SharedBranch) != s.Branch {
		return &IdentityError{Want: Identity{Remote: s.Remote, Branch: s.Branch}, Got: cfg, Fetched: true}
	}
	return nil
}

// refusal is a refusal settled by another process of the clone (its
// message and hint, as that process wrote them).
type refusal struct {
	msg, hint string
	kind      error
}

func (e *refusal) Error() string   { return e.msg }
func (e *refusal) Hint() string    { return e.hint }
func (e *refusal) Unwrap() []error { return []error{ErrRemote, e.kind} }
