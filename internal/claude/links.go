package claude

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// A cloned repository can commit .claude/settings.json, a skill file, or
// .claude/ itself as a symbolic link to the user's own ~/.claude or any
// other file: `pickup init --claude` would then merge hooks into, write
// skills into, or remove files from that target. So every path it works on
// below the repository's top must be a real file or directory (or missing),
// and one that is not is refused before anything is written or removed.

// LinkError is a link (or pipe, device) refused in .claude/.
type LinkError struct{ err error }

func (e *LinkError) Error() string {
	return "set up the Claude Code integration: " + e.err.Error()
}

func (e *LinkError) Unwrap() error { return e.err }

// Hint says what to do instead; the command line prints it.
func (e *LinkError) Hint() string {
	return "pickup never writes through a link in .claude/ (a repository could point it at your own ~/.claude); " +
		"replace the link with a copy of what it points to and run the command again; nothing was changed"
}

// CheckPaths refuses a link, named pipe or device at .claude, its
// settings files, skills directory, or any skill's directory or file: one
// lstat each, parents first.
func CheckPaths(top string) error { return CheckAgentPaths(top, Claude) }

// CheckAgentPaths refuses a link, named pipe or device at any directory
// or file an agent's setup writes: its settings file, skills and extra
// files, and every directory above them in the repository.
func CheckAgentPaths(top string, a *Agent) error {
	var dirs, files []string
	if a.Settings != "" {
		files = append(files, a.Settings)
	}
	if a == Claude {
		files = append(files, SharedSettingsFile)
	}
	for _, f := range a.Files() {
		files = append(files, f.Path)
	}
	seen := map[string]bool{}
	for _, f := range files {
		var up []string
		for d := path.Dir(f); d != "." && d != "/"; d = path.Dir(d) {
			up = append(up, d)
		}
		for i := len(up) - 1; i >= 0; i-- { // parents first
			if !seen[up[i]] {
				seen[up[i]] = true
				dirs = append(dirs, up[i])
			}
		}
	}
	check := func(rel string, dir bool) error {
		p := filepath.Join(top, filepath.FromSlash(rel))
		info, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("set up the Claude Code integration: %w", err)
		}
		if err := fsx.Unsafe(p, info.Mode(), dir); err != nil {
			return &LinkError{err}
		}
		return nil
	}
	for _, d := range dirs {
		if err := check(d, true); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := check(f, false); err != nil {
			return err
		}
	}
	return nil
}
