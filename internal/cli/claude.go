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
	// Before anything is made, the board included.
	if err := checkClaudePaths(top); err != nil {
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
	if err := checkClaudePaths(top); err != nil {
		return nil, err
	}
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
		old, err := fsx.ReadRegular(path)
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
