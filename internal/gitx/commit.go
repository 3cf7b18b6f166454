package gitx

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Change is one path whose state differs from HEAD, as `git status
// --porcelain` reports it: X is the index against HEAD, Y the work tree
// against the index ('?' for both when untracked).
type Change struct {
	X, Y byte
	Path string // relative to the top of the work tree, '/' separators
}

// Status returns the paths under the pathspecs (paths relative to Top, or
// absolute; files or directories) whose index or work tree differs from
// HEAD, untracked files included, ignored files not. Pathspecs that match
// nothing are no error. Status takes no lock.
func (r *Repo) Status(ctx context.Context, pathspecs ...string) ([]Change, error) {
	rels, err := r.rels(pathspecs)
	if err != nil || len(rels) == 0 {
		return nil, err
	}
	args := append([]string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignored=no", "--"}, rels...)
	out, err := r.Run(ctx, args...)
	if err != nil {
		return nil, err
	}
	var changes []Change
	for _, entry := range strings.Split(out, "\x00") {
		if len(entry) < 4 || entry[2] != ' ' {
			continue
		}
		changes = append(changes, Change{X: entry[0], Y: entry[1], Path: entry[3:]})
	}
	return changes, nil
}

func (r *Repo) rels(paths []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		if p == "" {
			continue
		}
		rel := p
		if filepath.IsAbs(p) {
			var err error
			if rel, err = r.Rel(p); err != nil {
				return nil, err
			}
		}
		if !seen[rel] {
			seen[rel] = true
			out = append(out, rel)
		}
	}
	return out, nil
}

// CommitPaths makes one commit of the current state of exactly the given
// paths (files or directories; absolute, or relative to Top), whatever
// else is staged: a user's staged changes to other paths stay staged and
// uncommitted. Paths that changed are added first (new files, deletions);
// paths that match nothing or did not change are left out, and if nothing
// changed no commit is made. It returns the paths committed.
//
// Commit hooks are skipped (--no-verify): these are bookkeeping commits.
// Other git processes' lock files are waited for or reported (RunLocked);
// concurrent callers in one repository must still take turns (the caller's
// named lock), as two commits at once would race for the index anyway.
func (r *Repo) CommitPaths(ctx context.Context, msg string, paths ...string) ([]string, error) {
	if r.RebaseInProgress() {
		// HEAD is detached on the rebase's way: a commit would land inside
		// the rebase. The change stays in the work tree for a later commit.
		return nil, fmt.Errorf("%w in %s: not committing now; finish or abort the rebase, then `pickup sync` commits what is pending", ErrRebaseInProgress, r.Top)
	}
	changes, err := r.Status(ctx, paths...)
	if err != nil || len(changes) == 0 {
		return nil, err
	}
	// Bring the index in line with the work tree where they differ.
	// (A path already staged the way it is, 'D ' say, is left alone: git
	// add would not find it.)
	var add []string
	for _, c := range changes {
		if c.Y != ' ' {
			add = append(add, c.Path)
		}
	}
	if len(add) > 0 {
		if _, err := r.RunLocked(ctx, append([]string{"add", "-A", "--"}, add...)...); err != nil {
			return nil, err
		}
	}
	// What now differs between the index and HEAD is what to commit. A
	// file added and then deleted before anyone committed it differs no
	// more, and `git commit -- path` would reject a path git never knew.
	staged, err := r.Status(ctx, paths...)
	if err != nil {
		return nil, err
	}
	var commit []string
	for _, c := range staged {
		if c.X != ' ' && c.X != '?' && c.X != '!' {
			commit = append(commit, c.Path)
		}
	}
	if len(commit) == 0 {
		return nil, nil
	}
	// With paths, git commit takes only those paths (--only): from a
	// temporary index built from HEAD, so nothing else staged comes along.
	args := append([]string{"commit", "-q", "--no-verify", "--no-edit", "-m", msg, "--only", "--"}, commit...)
	if _, err := r.RunLocked(ctx, args...); err != nil {
		var ge *Error
		if errors.As(err, &ge) && strings.Contains(ge.Stdout+ge.Stderr, "nothing to commit") {
			return nil, nil
		}
		return nil, err
	}
	return commit, nil
}
