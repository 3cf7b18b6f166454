package cli

// The Claude Code integration: `pickup init --claude` installs the /pickup
// and /handoff skills and merges pickup's hooks into .claude/settings.json;
// the hidden `pickup hook EVENT` command is what those hooks run.
//
// Owners. A hook's owner is the session_id Claude Code sends on stdin. The
// skills name the same owner three ways, so that they agree with the hooks
// on every Claude Code version: they pass --owner ${CLAUDE_SESSION_ID},
// which Claude Code replaces with the session id when it loads a skill;
// the SessionStart hook also writes `export CLAUDE_SESSION_ID=<id>` to
// $CLAUDE_ENV_FILE, which Claude Code sources before every Bash command, so
// the variable is set even where the text is not replaced; and the hook
// records the id under <board>/.pickup/claude/pids/<pid>.json for the Claude
// process, where claudeOwner finds it for a pickup command run without any
// owner at all.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/templates"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// pickup init --claude | --claude --uninstall | --agents

// ClaudeSettingsFile is where pickup merges its hooks, relative to the
// repository's top directory.
const ClaudeSettingsFile = ".claude/settings.json"

// hookPrefix starts the command of every hook that pickup installs; the
// hooks that carry it are pickup's, whatever else is in settings.json.
const hookPrefix = "pickup hook "

// claudeHooks are the hooks pickup installs, one group per event.
var claudeHooks = []struct {
	event, matcher, command string
}{
	{"SessionStart", "", hookPrefix + "session-start"},
	{"PostToolUse", "*", hookPrefix + "post-tool-use"},
	{"SessionEnd", "", hookPrefix + "session-end"},
}

// initClaudeFlags are the flags of `pickup init` for the agent integrations.
func initClaudeFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.BoolFlag{Name: "claude", Usage: "also install the Claude Code integration in the repository's .claude/: the /pickup and /handoff skills, and hooks in settings.json"},
		&ucli.BoolFlag{Name: "uninstall", Usage: "with --claude: remove exactly what --claude added (the board stays)"},
		&ucli.BoolFlag{Name: "agents", Usage: "print a snippet for AGENTS.md that teaches other agents (Codex, ...) the protocol"},
	}
}

// wantsIntegration reports whether `pickup init` was asked for an agent
// integration, which initIntegration then handles instead of plain init.
func wantsIntegration(c *ucli.Context) bool {
	return c.Bool("claude") || c.Bool("uninstall") || c.Bool("agents")
}

// claudeChange is one thing installClaude did, or found already done.
type claudeChange struct {
	Path string `json:"path"`
	// Action is created, updated, removed, unchanged, or kept (a file
	// that differs from pickup's and was left alone).
	Action string `json:"action"`
	Detail string `json:"detail,omitempty"`
}

// initIntegration runs `pickup init --claude [--uninstall]` and
// `pickup init --agents`.
func (r *run) initIntegration(c *ucli.Context) error {
	agents, claude, uninstall := c.Bool("agents"), c.Bool("claude"), c.Bool("uninstall")
	if agents && (claude || uninstall) {
		return usageError("--agents only prints the AGENTS.md snippet; run `pickup init --claude` separately")
	}
	if agents {
		if r.json {
			return r.printJSON(map[string]string{"agents_md": agentsSnippet()})
		}
		r.printf("%s", agentsSnippet())
		return nil
	}
	if !claude {
		return usageError("--uninstall goes with --claude: pickup init --claude --uninstall")
	}
	top, err := r.claudeRepoTop()
	if err != nil {
		return err
	}
	out := map[string]any{"repo": top}
	if !uninstall {
		dir, err := r.boardDir()
		if err != nil {
			return err
		}
		b, err := sessions.Init(dir)
		if err != nil {
			return err
		}
		out["dir"] = b.Dir
		if !r.json {
			r.printf("board ready at %s\n", b.Dir)
		}
		if r.dir != "" {
			fmt.Fprintf(r.env.Stderr, "pickup: warning: the hooks and skills do not pass --dir: they use $PICKUP_DIR, else the repository's %s\n", DefaultBoardDir)
		}
	}
	changes, err := r.installClaude(top, uninstall)
	if changes == nil {
		changes = []claudeChange{}
	}
	if r.json {
		if err != nil {
			return err
		}
		out["changes"] = changes
		return r.printJSON(out)
	}
	for _, ch := range changes {
		line := fmt.Sprintf("%-9s %s", ch.Action, ch.Path)
		if ch.Detail != "" {
			line += ": " + ch.Detail
		}
		r.printf("%s\n", line)
	}
	if err != nil {
		return err
	}
	switch {
	case uninstall:
		r.printf("Claude Code integration removed from %s\n", top)
	case claudeAnyChanged(changes):
		r.printf("Claude Code integration installed in %s: /pickup, /handoff and pickup's hooks; start a new Claude Code session to load them\n", top)
	default:
		r.printf("Claude Code integration is up to date in %s\n", top)
	}
	return nil
}

func claudeAnyChanged(changes []claudeChange) bool {
	for _, ch := range changes {
		if ch.Action == "created" || ch.Action == "updated" || ch.Action == "removed" {
			return true
		}
	}
	return false
}

// agentsSnippet is the AGENTS.md section that `pickup init --agents` prints.
func agentsSnippet() string { return templates.Agents() }

// claudeRepoTop is the directory whose .claude/ the integration goes into:
// the top of the main work tree of the enclosing git repository (the one the board
// belongs to), else the current directory.
func (r *run) claudeRepoTop() (string, error) {
	wd, err := r.env.Getwd()
	if err != nil {
		return "", err
	}
	if top, ok := mainWorktree(wd); ok {
		return top, nil
	}
	return filepath.Abs(wd)
}

// installClaude installs the skills and merges the hooks into
// <top>/.claude/settings.json, or with uninstall removes exactly those.
// Everything is checked before anything is written: an unreadable or
// invalid settings.json changes nothing. A second install changes nothing.
func (r *run) installClaude(top string, uninstall bool) ([]claudeChange, error) {
	settings := filepath.Join(top, filepath.FromSlash(ClaudeSettingsFile))
	plan, err := planSettings(settings, uninstall)
	if err != nil {
		return nil, err
	}
	type fileStep struct {
		path string
		data []byte
		act  string
	}
	var steps []fileStep
	var changes []claudeChange
	for _, f := range templates.Claude() {
		path := filepath.Join(top, filepath.FromSlash(f.Path))
		old, err := os.ReadFile(path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		same := exists && bytes.Equal(old, f.Data)
		switch {
		case !exists && !uninstall:
			steps = append(steps, fileStep{path, f.Data, "created"})
		case !exists:
			// Nothing to remove.
		case same && !uninstall:
			changes = append(changes, claudeChange{Path: path, Action: "unchanged"})
		case same:
			steps = append(steps, fileStep{path, nil, "removed"})
		case !uninstall:
			changes = append(changes, claudeChange{Path: path, Action: "kept",
				Detail: "differs from pickup's; left as it is (delete it and run `pickup init --claude` again for pickup's)"})
		default:
			changes = append(changes, claudeChange{Path: path, Action: "kept", Detail: "differs from what pickup installs; left as it is"})
		}
	}
	for _, s := range steps {
		if s.act == "removed" {
			if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return changes, err
			}
			_ = os.Remove(filepath.Dir(s.path)) // .claude/skills/<name>/, only if empty
		} else {
			if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
				return changes, err
			}
			if err := fsx.WriteNew(s.path, s.data, 0o644, !r.noSync); err != nil {
				return changes, fmt.Errorf("write %s: %w", s.path, err)
			}
		}
		changes = append(changes, claudeChange{Path: s.path, Action: s.act})
	}
	if err := plan.apply(!r.noSync); err != nil {
		return changes, err
	}
	if plan.change.Path != "" {
		changes = append(changes, plan.change)
	}
	if uninstall {
		// Empty directories hold nothing of anyone's.
		_ = os.Remove(filepath.Join(top, ".claude", "skills"))
		_ = os.Remove(filepath.Join(top, ".claude"))
	}
	return changes, nil
}

// settingsPlan is the change to settings.json, computed before anything
// is written.
type settingsPlan struct {
	path    string // the file to write (a symlink's target)
	old     []byte // its content when planned
	existed bool   // whether it existed then
	data    []byte // new content; nil with remove
	remove  bool
	write   bool
	perm    fs.FileMode
	change  claudeChange
}

func (p settingsPlan) apply(sync bool) error {
	if p.remove || p.write {
		// Someone (Claude Code itself, /config) may have saved the file
		// since it was read: never overwrite that.
		now, err := os.ReadFile(p.path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if (err == nil) != p.existed || !bytes.Equal(now, p.old) {
			return fmt.Errorf("%s changed while pickup was merging it; run again (it was left as it is)", p.path)
		}
	}
	switch {
	case p.remove:
		if err := os.Remove(p.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	case p.write:
		if err := os.MkdirAll(filepath.Dir(p.path), 0o755); err != nil {
			return err
		}
		if err := fsx.WriteReplace(p.path, p.data, p.perm, sync); err != nil {
			return fmt.Errorf("write %s: %w", p.path, err)
		}
	}
	return nil
}

// planSettings reads settings.json and computes its new content.
func planSettings(settings string, uninstall bool) (settingsPlan, error) {
	plan := settingsPlan{path: settings, perm: 0o644, change: claudeChange{Path: settings, Action: "unchanged"}}
	if target, err := filepath.EvalSymlinks(settings); err == nil {
		plan.path = target // keep a symlinked settings.json a symlink
	}
	data, err := os.ReadFile(plan.path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return plan, err
	}
	if !exists && uninstall {
		plan.change = claudeChange{}
		return plan, nil
	}
	plan.old, plan.existed = data, exists
	if info, err := os.Stat(plan.path); err == nil {
		plan.perm = info.Mode().Perm()
	}
	root := &ojValue{kind: '{'}
	if exists && len(bytes.TrimSpace(data)) > 0 {
		root, err = parseOJ(data)
		if err != nil {
			return plan, fmt.Errorf("%s: %w; fix or remove it and run again (nothing was changed)", settings, err)
		}
		if root.kind != '{' {
			return plan, fmt.Errorf("%s: the settings must be a JSON object; fix it and run again (nothing was changed)", settings)
		}
	}
	var changed bool
	if uninstall {
		changed = removeClaudeHooks(root)
	} else {
		changed, err = addClaudeHooks(root)
		if err != nil {
			return plan, fmt.Errorf("%s: %w; fix it and run again (nothing was changed)", settings, err)
		}
	}
	if !changed {
		return plan, nil
	}
	var events []string
	for _, h := range claudeHooks {
		events = append(events, h.event)
	}
	switch {
	case uninstall && len(root.members) == 0:
		plan.remove = true
		plan.change = claudeChange{Path: settings, Action: "removed", Detail: "it held only pickup's hooks"}
	case uninstall:
		plan.write = true
		plan.change = claudeChange{Path: settings, Action: "updated", Detail: "removed pickup's hooks, kept everything else"}
	case !exists:
		plan.write = true
		plan.change = claudeChange{Path: settings, Action: "created", Detail: "hooks " + strings.Join(events, ", ") + " run `pickup hook ...`"}
	default:
		plan.write = true
		plan.change = claudeChange{Path: settings, Action: "updated", Detail: "added pickup's hooks (" + strings.Join(events, ", ") + "), kept everything else"}
	}
	if plan.write {
		plan.data = root.encode()
	}
	return plan, nil
}

// addClaudeHooks adds pickup's hook groups that root lacks. A hook whose
// command is exactly pickup's counts as installed wherever it is (the user
// may have moved it or changed its matcher); other commands starting with
// "pickup hook " under the same event, from another pickup version, are
// replaced.
func addClaudeHooks(root *ojValue) (changed bool, err error) {
	hooks := root.get("hooks")
	if hooks == nil {
		hooks = &ojValue{kind: '{'}
		root.add("hooks", hooks)
		changed = true
	} else if hooks.kind != '{' {
		return false, errors.New(`"hooks" is not an object`)
	}
	for _, h := range claudeHooks {
		groups := hooks.get(h.event)
		if groups == nil {
			groups = &ojValue{kind: '['}
			hooks.add(h.event, groups)
			changed = true
		} else if groups.kind != '[' {
			return false, fmt.Errorf(`"hooks.%s" is not an array`, h.event)
		}
		if hasHookCommand(groups, h.command) {
			continue
		}
		removePickupHooks(groups)
		group := &ojValue{kind: '{'}
		if h.matcher != "" {
			group.add("matcher", ojString(h.matcher))
		}
		hook := &ojValue{kind: '{'}
		hook.add("type", ojString("command"))
		hook.add("command", ojString(h.command))
		group.add("hooks", &ojValue{kind: '[', elems: []*ojValue{hook}})
		groups.elems = append(groups.elems, group)
		changed = true
	}
	return changed, nil
}

// removeClaudeHooks removes every hook whose command starts with "pickup
// hook ", then the groups, event arrays, "hooks" object that this emptied.
// Anything that was empty before stays.
func removeClaudeHooks(root *ojValue) bool {
	hooks := root.get("hooks")
	if hooks == nil || hooks.kind != '{' {
		return false
	}
	changed := false
	kept := hooks.members[:0:0]
	for _, m := range hooks.members {
		if m.val.kind == '[' && removePickupHooks(m.val) > 0 {
			changed = true
			if len(m.val.elems) == 0 {
				continue
			}
		}
		kept = append(kept, m)
	}
	hooks.members = kept
	if changed && len(hooks.members) == 0 {
		root.remove(hooks)
	}
	return changed
}

// removePickupHooks removes pickup's hooks from an event's array of groups,
// and the groups that this left without hooks. It returns how many hooks it
// removed.
func removePickupHooks(groups *ojValue) int {
	n := 0
	kept := groups.elems[:0:0]
	for _, g := range groups.elems {
		list := g.get("hooks")
		if g.kind == '{' && list != nil && list.kind == '[' {
			before := len(list.elems)
			rest := list.elems[:0:0]
			for _, h := range list.elems {
				if cmd, ok := h.getString("command"); ok && strings.HasPrefix(strings.TrimSpace(cmd), hookPrefix) {
					continue
				}
				rest = append(rest, h)
			}
			list.elems = rest
			if removed := before - len(rest); removed > 0 {
				n += removed
				if len(rest) == 0 {
					continue
				}
			}
		}
		kept = append(kept, g)
	}
	groups.elems = kept
	return n
}

func hasHookCommand(groups *ojValue, command string) bool {
	for _, g := range groups.elems {
		if list := g.get("hooks"); list != nil && list.kind == '[' {
			for _, h := range list.elems {
				if cmd, ok := h.getString("command"); ok && strings.TrimSpace(cmd) == command {
					return true
				}
			}
		}
	}
	return false
}
