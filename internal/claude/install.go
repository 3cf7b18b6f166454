package claude

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// `pickup init --claude [--uninstall]`: the skills into .claude/skills/,
// pickup's hooks merged into .claude/settings.local.json.

// SettingsFile is where pickup merges its hooks, relative to the top of
// the repository's main work tree: the local settings, which Claude Code
// 2.1.331 reads there whichever folder of the repository, or of any of its
// worktrees, it was started in. (It reads .claude/settings.json only in
// the folder it was started in: hooks there do not fire in a subfolder.)
const SettingsFile = ".claude/settings.local.json"

// SharedSettingsFile is where earlier versions of pickup put the hooks;
// init --claude moves them out of it, and --uninstall removes them from
// both.
const SharedSettingsFile = ".claude/settings.json"

// hookPrefix is in the command of every hook that pickup installs; the
// hooks that carry it are pickup's, whatever else is in the settings.
const hookPrefix = "pickup hook "

// Change is one thing Install did, or found already done.
type Change struct {
	Path string `json:"path"`
	// Action is created, updated, removed, unchanged, or kept (a file
	// that differs from pickup's and was left alone).
	Action string `json:"action"`
	Detail string `json:"detail,omitempty"`
}

// AnyChanged reports whether changes changed anything on disk.
func AnyChanged(changes []Change) bool {
	for _, ch := range changes {
		if ch.Action == "created" || ch.Action == "updated" || ch.Action == "removed" {
			return true
		}
	}
	return false
}

// Install installs the skills and merges the hooks into
// <top>/.claude/settings.local.json (moving them out of settings.json,
// where earlier versions put them), or with uninstall removes exactly
// those: InstallAgent for Claude Code.
func Install(top string, uninstall, sync bool) ([]Change, error) {
	return InstallAgent(top, Claude, uninstall, sync)
}

// InstallAgent installs an agent's setup in the repository at top: its
// skills and extra files, and pickup's hooks merged into its settings
// file; or with uninstall removes exactly those. The skills in
// .agents/skills/ are shared by Codex CLI, Gemini CLI and opencode: an
// uninstall keeps them while another of those is still set up.
// Everything is checked before anything is written: an unreadable or
// invalid settings file changes nothing. A second install changes nothing.
// sync makes the new files durable (fsync).
func InstallAgent(top string, a *Agent, uninstall, sync bool) ([]Change, error) {
	if err := CheckAgentPaths(top, a); err != nil {
		return nil, err
	}
	var plans []settingsPlan
	if a.Settings != "" {
		files := []string{a.Settings}
		if a == Claude {
			files = append(files, SharedSettingsFile)
		}
		for i, f := range files {
			add := i == 0 && !uninstall // the shared file only ever loses pickup's hooks
			p, err := planSettings(filepath.Join(top, filepath.FromSlash(f)), a.hookTemplate(), add)
			if err != nil {
				return nil, err
			}
			if !add && p.change.Action == "unchanged" {
				p.change = Change{} // nothing of pickup's there: not worth a line
			}
			plans = append(plans, p)
		}
	}
	sharedBy := ""
	if uninstall && a.skillsDir == SharedSkillsDir {
		sharedBy = otherSharedSetup(top, a)
	}
	type fileStep struct {
		path string
		data []byte
		act  string
	}
	var steps []fileStep
	var changes []Change
	for _, f := range a.Files() {
		path := filepath.Join(top, filepath.FromSlash(f.Path))
		old, err := fsx.ReadRegular(path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		same := exists && bytes.Equal(old, f.Data)
		if exists && !same && !uninstall && a == Claude && priorSkill(old) {
			// An earlier pickup's skill, as it installed it: upgrade it.
			steps = append(steps, fileStep{path, f.Data, "updated"})
			continue
		}
		shared := sharedBy != "" && strings.HasPrefix(f.Path, SharedSkillsDir+"/")
		switch {
		case !exists && !uninstall:
			steps = append(steps, fileStep{path, f.Data, "created"})
		case !exists:
			// Nothing to remove.
		case same && !uninstall:
			changes = append(changes, Change{Path: path, Action: "unchanged"})
		case same && shared:
			changes = append(changes, Change{Path: path, Action: "kept", Detail: "still used by the setup of " + sharedBy})
		case same:
			steps = append(steps, fileStep{path, nil, "removed"})
		case !uninstall:
			changes = append(changes, Change{Path: path, Action: "kept",
				Detail: "differs from pickup's; left as it is (delete it and run `pickup init --" + a.Name + "` again for pickup's)"})
		default:
			changes = append(changes, Change{Path: path, Action: "kept", Detail: "differs from what pickup installs; left as it is"})
		}
	}
	for _, s := range steps {
		switch s.act {
		case "removed":
			if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return changes, err
			}
			_ = os.Remove(filepath.Dir(s.path)) // skills/<name>/, only if empty
		case "updated":
			if err := fsx.WriteReplace(s.path, s.data, 0o644, sync); err != nil {
				return changes, fmt.Errorf("write %s: %w", s.path, err)
			}
		default:
			if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
				return changes, err
			}
			if err := fsx.WriteNew(s.path, s.data, 0o644, sync); err != nil {
				return changes, fmt.Errorf("write %s: %w", s.path, err)
			}
		}
		changes = append(changes, Change{Path: s.path, Action: s.act})
	}
	for _, plan := range plans {
		if err := plan.apply(sync); err != nil {
			return changes, err
		}
		if plan.change.Path != "" {
			changes = append(changes, plan.change)
		}
	}
	if a == Claude {
		ch, err := ignoreLocalSettings(top, uninstall, sync)
		if err != nil {
			return changes, err
		}
		if ch.Path != "" {
			changes = append(changes, ch)
		}
	}
	if uninstall {
		// Empty directories hold nothing of anyone's.
		for _, d := range a.emptiedDirs() {
			_ = os.Remove(filepath.Join(top, filepath.FromSlash(d)))
		}
	}
	return changes, nil
}

// emptiedDirs are the directories an uninstall removes when it left them
// empty, deepest first.
func (a *Agent) emptiedDirs() []string {
	dirs := []string{a.skillsDir, path.Dir(a.skillsDir)}
	for _, dst := range a.extra {
		dirs = append(dirs, path.Dir(dst))
	}
	if a.Settings != "" {
		dirs = append(dirs, path.Dir(a.Settings))
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		for ; d != "." && d != "/" && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(x, y string) int { return strings.Count(y, "/") - strings.Count(x, "/") })
	return out
}

// otherSharedSetup names another agent whose pickup hooks are installed
// in the repository and who reads the skills of .agents/skills/ too; "" if
// none.
func otherSharedSetup(top string, a *Agent) string {
	for _, o := range Agents() {
		if o == a || o.skillsDir != SharedSkillsDir || o.Settings == "" {
			continue
		}
		if hooksInstalled(filepath.Join(top, filepath.FromSlash(o.Settings))) {
			return o.Title
		}
	}
	return ""
}

// hooksInstalled reports whether a settings file holds any hook of
// pickup's.
func hooksInstalled(settings string) bool {
	data, err := fsx.ReadRegular(settings)
	if err != nil {
		return false
	}
	root, err := parseOJ(data)
	if err != nil || root.kind != '{' {
		return false
	}
	return removeHooks(root)
}

// PluginEnabled reports whether Claude Code's user settings (under
// configDir, ~/.claude unless $CLAUDE_CONFIG_DIR says otherwise) enable a
// plugin named pickup. Its hooks and those of a project install would both
// run (Claude Code 2.1.331 runs a plugin's hooks and the settings' hooks
// side by side even when their commands are the same), so init --claude
// warns.
func PluginEnabled(configDir string) bool {
	data, err := fsx.ReadRegular(filepath.Join(configDir, "settings.json"))
	if err != nil {
		return false
	}
	var s struct {
		EnabledPlugins map[string]any `json:"enabledPlugins"`
	}
	if json.Unmarshal(data, &s) != nil {
		return false
	}
	for id, on := range s.EnabledPlugins {
		if name, _, _ := strings.Cut(id, "@"); name == "pickup" && on == true {
			return true
		}
	}
	return false
}

// priorSkills are the SHA-256 sums of the skills earlier versions of pickup
// installed, so that init --claude upgrades them; a skill the user edited
// matches none and is kept.
var priorSkills = map[string]bool{
	"0436bb5384b37ea62f56bdc8b7375da050a78c1be84898984f4fc3194cedb6fd": true, // pickup
	"66cfab14ef794af3c485860940d36b79507b6f8f032d648173c64993df8c4fb7": true, // pickup
	"cc019ea0cf15fe6c9e0976335b9e933fb3c70eb1b0fb5fa6c5afb01be7a577fd": true, // handoff
	"df62670d257d3c797ad4c79a4cde559f65b3674b582b65f2fb69262fb0b0afc3": true, // handoff
}

func priorSkill(data []byte) bool {
	sum := sha256.Sum256(data)
	return priorSkills[hex.EncodeToString(sum[:])]
}
