package claude

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// `pickup init --claude` writes pickup's hooks into
// .claude/settings.local.json, a file of this user's: left untracked and
// not ignored, a `git add -A` commits it. Claude Code does not ignore it on
// its own when pickup makes it, so init --claude adds it to the clone's
// .git/info/exclude: not to .gitignore, which is committed and would be a
// change to the repository that every collaborator gets, while the file is
// only ever made per clone (by init --claude, or by Claude Code).

// excludeBlock is what init --claude adds to .git/info/exclude; uninstall
// removes exactly this.
const excludeBlock = "# pickup init --claude: Claude Code's local settings (pickup's hooks), not to be committed\n" + SettingsFile + "\n"

// ignoreLocalSettings makes git ignore SettingsFile in the repository at
// top (or, with uninstall, removes what it added), and says what it did.
func ignoreLocalSettings(top string, uninstall, sync bool) (Change, error) {
	exclude := filepath.Join(top, ".git", "info", "exclude")
	if info, err := os.Lstat(filepath.Join(top, ".git")); err != nil || !info.IsDir() {
		if uninstall {
			return Change{}, nil
		}
		return Change{Path: filepath.Join(top, SettingsFile), Action: "unchanged",
			Detail: "not a git repository here, so nothing to ignore it in; do not commit it (it holds your local hooks)"}, nil
	}
	old, err := fsx.ReadRegular(exclude)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Change{}, err
	}
	has := bytes.Contains(old, []byte(excludeBlock))
	if uninstall {
		if !has {
			return Change{}, nil
		}
		data := bytes.Replace(old, []byte(excludeBlock), nil, 1)
		if err := fsx.WriteReplace(exclude, data, 0o644, sync); err != nil {
			return Change{}, err
		}
		return Change{Path: exclude, Action: "updated", Detail: "no longer ignores " + SettingsFile}, nil
	}
	if has {
		return Change{Path: exclude, Action: "unchanged", Detail: "git ignores " + SettingsFile}, nil
	}
	if ignoredByGit(top) {
		return Change{Path: filepath.Join(top, SettingsFile), Action: "unchanged", Detail: "git already ignores it"}, nil
	}
	data := old
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	data = append(data, excludeBlock...)
	if err := os.MkdirAll(filepath.Dir(exclude), 0o755); err != nil {
		return Change{}, err
	}
	if err := fsx.WriteReplace(exclude, data, 0o644, sync); err != nil {
		return Change{}, err
	}
	return Change{Path: exclude, Action: "updated", Detail: "git now ignores " + SettingsFile + " in this clone (your local hooks: `git add -A` leaves it out)"}, nil
}

// ignoredByGit reports whether git's own rules (.gitignore, a global
// excludes file) already ignore SettingsFile; false if git cannot say.
func ignoredByGit(top string) bool {
	cmd := exec.Command("git", "-C", top, "check-ignore", "-q", "--no-index", SettingsFile)
	return cmd.Run() == nil
}
