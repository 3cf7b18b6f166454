package claude

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// What the PreToolUse hook checks before it approves a pickup command, and
// the hard links it refuses edits through. A pickup command is approved
// only on the repository's own board: a --dir, or a $PICKUP_DIR in Claude
// Code's environment, naming another directory is another board (or any
// directory: `pickup --dir /etc next`), and Claude Code asks as without
// pickup. `pickup new FILE` copies FILE into the board, which a shared board
// pushes to its remote: approved only for a FILE of the repository, reached
// without a link out of it and not a hard link (whose other names cannot
// be known).

// repoTop is the repository the hook works for: Hooks.RepoTop, else none.
func (h *Hooks) repoTop(cwd string) string {
	if h.RepoTop == nil {
		return ""
	}
	return h.RepoTop(cwd)
}

// safeCommand reports whether an agent's pickup command stays on the
// repository's board and reads no file from outside the repository.
func (h *Hooks) safeCommand(c agentCmd, cwd string) bool {
	if !filepath.IsAbs(cwd) {
		cwd = ""
		if h.Getwd != nil {
			cwd, _ = h.Getwd()
		}
	}
	top := h.repoTop(cwd)
	if top == "" || !filepath.IsAbs(cwd) {
		return false // nothing to judge the paths against
	}
	board, err := h.BoardDir(cwd)
	if err != nil {
		return false
	}
	if !filepath.IsAbs(board) {
		board = filepath.Join(cwd, board)
	}
	realTop, err := filepath.EvalSymlinks(top)
	if err != nil {
		return false
	}
	// The board pickup will use ($PICKUP_DIR, else the repository's) must
	// be the repository's.
	if !under(resolveExisting(board), realTop) {
		return false
	}
	for _, d := range c.dirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(cwd, d)
		}
		if resolveExisting(filepath.Clean(d)) != resolveExisting(filepath.Clean(board)) {
			return false
		}
	}
	if c.name == "new" {
		for _, a := range c.args {
			if a == "-" {
				continue // standard input: the command was simple, nothing is piped
			}
			if !filepath.IsAbs(a) {
				a = filepath.Join(cwd, a)
			}
			real, err := filepath.EvalSymlinks(a)
			if err != nil || !under(real, realTop) {
				return false
			}
			info, err := os.Stat(real)
			if err != nil || !info.Mode().IsRegular() || links(info) > 1 {
				return false
			}
		}
	}
	return true
}

// links is a file's count of hard links; 1 where it cannot be known.
func links(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// linkedToBoard reports whether path is a hard link to a file of the board
// or of .git/pickup: an edit through it would change that file. Only a
// file with more than one link is looked for (rare), so the walk of the
// board is no cost to an ordinary edit.
func linkedToBoard(path, board, top string) bool {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() || links(info) < 2 {
		return false
	}
	found := false
	for _, dir := range []string{board, filepath.Join(top, ".git", "pickup")} {
		if dir == "" || (top == "" && dir != board) {
			continue
		}
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || found {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil && os.SameFile(fi, info) {
					found = true
					return filepath.SkipAll
				}
			}
			return nil
		})
		if found {
			return true
		}
	}
	return false
}
