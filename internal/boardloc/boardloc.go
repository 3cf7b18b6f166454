// Package boardloc finds the board a command works on, the one way every
// door of pickup does (the CLI, pickup mcp): --dir, else $PICKUP_DIR, else
// .spx/sessions at the top of the enclosing git repository's main work
// tree (so that every linked worktree shares one board), else
// ./.spx/sessions.
//
// It only names the directory: whether a board is there is for
// sessions.Open to say. It reads .git files the way git does instead of
// running git, so finding the board costs a few stats.
package boardloc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// DefaultDir is the board's place inside a repository or directory.
const DefaultDir = ".spx/sessions"

// ErrEmptyDir is a --dir given as "".
var ErrEmptyDir = errors.New("--dir is empty: give the board directory, or leave --dir out to use the default")

// Find returns the board directory: dir when dirSet (an empty one is
// ErrEmptyDir), else $PICKUP_DIR as getenv reads it, else the repository's
// or wd's .spx/sessions.
func Find(dir string, dirSet bool, getenv func(string) string, wd string) (string, error) {
	if dirSet {
		if dir == "" {
			return "", ErrEmptyDir
		}
		return dir, nil
	}
	if d := getenv("PICKUP_DIR"); d != "" {
		return d, nil
	}
	if top, ok := MainWorktree(wd); ok {
		return filepath.Join(top, DefaultDir), nil
	}
	return filepath.Join(wd, DefaultDir), nil
}

// MainWorktree returns the top of the main work tree of the git repository
// enclosing dir. In a linked worktree .git is a file "gitdir: <path>" whose
// directory has a "commondir" file pointing at the main repository's .git.
func MainWorktree(dir string) (string, bool) {
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
