package gitremote

// The board branch only moves forward. A clone remembers the last tip it
// saw (refs/pickup/board: a commit the remote had, pushed or fetched by
// this clone) and adopts a fetched tip only if it descends from it. A
// person who force-pushes the branch back, rewrites it or deletes it makes
// every clone that saw the lost history refuse, with exit 8, until someone
// repairs the board (pickup sync --repair): nothing is built on a history
// that forgot transitions, and a deleted branch is never re-created as the
// side effect of a claim.
//
// Every push of the board branch is conditional on the remote's current
// value (--force-with-lease=refs/heads/<branch>:<the tip it was built
// on>): git's receive-pack updates the ref only if it still holds that
// commit, under the ref's lock. So a clone that trusts a fetch made a
// moment ago cannot re-create a branch deleted since (the lease expects
// the old tip, the remote has none), nor put its commit on top of a
// rewrite: the push is refused, the refusal fetches, and the fetch shows
// what happened.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pickup-dev/pickup/internal/gitx"
)

// ErrRewritten: the remote's board branch no longer descends from the
// last tip this clone saw (a force push, a rewrite). It matches ErrRemote
// too (exit 8).
var ErrRewritten = errors.New("the board branch was rewritten on the remote")

// ErrBranchDeleted: the remote's board branch is gone, though this clone
// saw it. It matches ErrRemote too (exit 8).
var ErrBranchDeleted = errors.New("the board branch was deleted on the remote")

// HistoryError: the remote's board branch went backwards or vanished.
// Nothing was moved here. It matches ErrRemote and ErrRewritten or
// ErrBranchDeleted.
type HistoryError struct {
	Remote, Branch string
	Seen           string // the last tip this clone saw
	Now            string // the remote's tip ("" deleted)
}

func (e *HistoryError) Error() string {
	if e.Now == "" {
		return fmt.Sprintf("%v: %s has no branch %s, though this clone saw it at %s; refusing to re-create it as a side effect", ErrBranchDeleted, e.Remote, e.Branch, short(e.Seen))
	}
	return fmt.Sprintf("%v: %s/%s is at %s, which does not descend from %s, the last tip this clone saw (a force push or a rewrite dropped transitions); refusing to build on it", ErrRewritten, e.Remote, e.Branch, short(e.Now), short(e.Seen))
}

func (e *HistoryError) Unwrap() []error {
	if e.Now == "" {
		return []error{ErrRemote, ErrBranchDeleted}
	}
	return []error{ErrRemote, ErrRewritten}
}

// Hint says how to see the damage and repair it.
func (e *HistoryError) Hint() string {
	if e.Now == "" {
		return fmt.Sprintf("nothing was moved on this board; if the deletion was a mistake, run `pickup sync --repair` (or `pickup init --shared %s`) in the clone that saw the most recent board: it re-creates %s from this clone's history; `pickup doctor` shows what this clone knows", e.Remote, e.Branch)
	}
	return "nothing was moved on this board; run `pickup doctor` to see which sessions the rewrite lost, then `pickup sync --repair` to replay this clone's transitions onto the remote's board (a session finished in the lost history stays finished; a live claim stays with its owner); do not force-push the board branch"
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// isAncestor reports whether commit a is b or one of its ancestors.
func (s *Board) isAncestor(ctx context.Context, a, b string) (bool, error) {
	if a == b {
		return true, nil
	}
	_, err := s.Repo.Run(ctx, "merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	var ge *gitx.Error
	if errors.As(err, &ge) && ge.Code == 1 {
		return false, nil
	}
	return false, err
}

// forward checks that fetched, the remote's tip, descends from seen, the
// last tip this clone saw ("" none yet).
func (s *Board) forward(ctx context.Context, seen, fetched string) error {
	if seen == "" || seen == fetched {
		return nil
	}
	ok, err := s.isAncestor(ctx, seen, fetched)
	if err != nil {
		return fmt.Errorf("shared board: %w", err)
	}
	if !ok {
		return &HistoryError{Remote: s.Remote, Branch: s.Branch, Seen: seen, Now: fetched}
	}
	return nil
}

// gone is the error of a remote without the board branch: a
// HistoryError if this clone saw the branch (seen), else err
// (ErrNoBoardBranch: run init --shared).
func (s *Board) gone(seen string, err error) error {
	if seen == "" || !errors.Is(err, ErrNoBoardBranch) {
		return err
	}
	return &HistoryError{Remote: s.Remote, Branch: s.Branch, Seen: seen}
}

// lease is push's option that makes the push of the board branch
// conditional on the remote's value: tip ("" the branch must not exist).
func (s *Board) lease(tip string) string {
	return "--force-with-lease=refs/heads/" + s.Branch + ":" + tip
}

// pushBoard pushes commit, built on tip, to the board branch, if the
// remote's branch is still at tip.
func (s *Board) pushBoard(ctx context.Context, tip, commit string) error {
	_, err := s.Repo.Run(ctx, "push", "--quiet", "--no-verify", "--atomic", s.lease(tip), s.Remote,
		commit+":refs/heads/"+s.Branch, "+"+commit+":"+tipsRef+s.Branch)
	return err
}

// readRef reads a ref of this clone without running git where it can (a
// loose ref file: update-ref writes them so); "" if there is none.
func (s *Board) readRef(ctx context.Context, ref string) string {
	if data, err := os.ReadFile(filepath.Join(s.Repo.CommonDir, filepath.FromSlash(ref))); err == nil {
		if v := strings.TrimSpace(string(data)); len(v) >= 40 && !strings.HasPrefix(v, "ref:") {
			return v
		}
	}
	out, err := s.Repo.Run(ctx, "rev-parse", "-q", "--verify", ref+"^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}
