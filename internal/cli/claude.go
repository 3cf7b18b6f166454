package cli

// The command-line wiring of the Claude Code integration (internal/claude):
// `pickup init --claude [--uninstall] | --agents`, and the hidden
// `pickup hook EVENT` command that Claude Code's hooks run.

import (
	"fmt"
	"io"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/pickup-dev/pickup/internal/claude"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/internal/templates"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// pickup init --claude | --claude --uninstall | --agents

// initClaudeFlags are the flags of `pickup init` for the agent integrations.
func initClaudeFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.BoolFlag{Name: "claude", Usage: "also install the Claude Code integration in the repository's .claude/: the /pickup and /handoff skills, and hooks in settings.local.json"},
		&ucli.BoolFlag{Name: "codex", Usage: "also set up Codex CLI: hooks in .codex/hooks.json, the /pickup and /handoff skills in .agents/skills/"},
		&ucli.BoolFlag{Name: "gemini", Usage: "also set up Gemini CLI: hooks in .gemini/settings.json, the skills in .agents/skills/, /pickup in .gemini/commands/"},
		&ucli.BoolFlag{Name: "opencode", Usage: "also set up opencode: the skills in .agents/skills/ (no hooks: see pickup help agents)"},
		&ucli.BoolFlag{Name: "uninstall", Usage: "with --claude, --codex, --gemini or --opencode: remove exactly what it added (the board stays)"},
		&ucli.BoolFlag{Name: "agents", Usage: "print a snippet for AGENTS.md that teaches other agents (Codex, ...) the protocol"},
	}
}

// wantsIntegration reports whether `pickup init` was asked for an agent
// integration, which initIntegration then handles instead of plain init.
func wantsIntegration(c *ucli.Context) bool {
	return c.Bool("claude") || c.Bool("codex") || c.Bool("gemini") || c.Bool("opencode") || c.Bool("uninstall") || c.Bool("agents")
}

// chosenAgents are the agents whose flags `pickup init` was given.
func chosenAgents(c *ucli.Context) []*claude.Agent {
	var out []*claude.Agent
	for _, a := range claude.Agents() {
		if c.Bool(a.Name) {
			out = append(out, a)
		}
	}
	return out
}

// initIntegration runs `pickup init --claude [--uninstall]` and
// `pickup init --agents`.
func (r *run) initIntegration(c *ucli.Context) error {
	agents, uninstall := c.Bool("agents"), c.Bool("uninstall")
	chosen := chosenAgents(c)
	withClaude := len(chosen) > 0
	if agents && (withClaude || uninstall) {
		return usageError("--agents only prints the AGENTS.md snippet; run `pickup init --claude` (or --codex, --gemini, --opencode) separately")
	}
	if agents {
		if r.json {
			return r.printJSON(map[string]string{"agents_md": agentsSnippet()})
		}
		r.printf("%s", agentsSnippet())
		return nil
	}
	if !withClaude {
		return usageError("--uninstall goes with --claude, --codex, --gemini or --opencode, the agent to remove: pickup init --claude --uninstall")
	}
	top, err := r.claudeRepoTop()
	if err != nil {
		return err
	}
	// Before anything is made, the board included.
	for _, a := range chosen {
		if err := claude.CheckAgentPaths(top, a); err != nil {
			return err
		}
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
		if c.Bool("claude") && r.claudePluginEnabled() {
			fmt.Fprintf(r.env.Stderr, "pickup: warning: the pickup plugin is enabled in your Claude Code user settings: its hooks and the ones installed here would both run; keep one (`claude plugin disable pickup@pickup`, or `pickup init --claude --uninstall`)\n")
		}
	}
	changes := []claude.Change{}
	var err2 error
	for _, a := range chosen {
		ch, err := claude.InstallAgent(top, a, uninstall, !r.noSync)
		for _, c := range ch {
			// The skills of .agents/skills/ are shared: one line each.
			if !slices.Contains(changes, c) {
				changes = append(changes, c)
			}
		}
		if err != nil {
			err2 = err
			break
		}
	}
	if r.json {
		if err2 != nil {
			return err2
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
	if err2 != nil {
		return err2
	}
	var titles []string
	for _, a := range chosen {
		titles = append(titles, a.Title)
	}
	names := strings.Join(titles, ", ")
	switch {
	case uninstall:
		r.printf("%s integration removed from %s\n", names, top)
	case claude.AnyChanged(changes):
		r.printf("%s integration installed in %s: /pickup, /handoff and pickup's hooks; start a new session of the agent to load them%s\n", names, top, trustNote(chosen))
	default:
		r.printf("%s integration is up to date in %s\n", names, top)
	}
	return nil
}

// trustNote is what a user must do besides starting a new session: Codex
// CLI and Gemini CLI run a project's hooks only in a folder (and, for
// Codex, hooks) the user trusts.
func trustNote(chosen []*claude.Agent) string {
	note := ""
	for _, a := range chosen {
		switch a {
		case claude.Codex:
			note += "; Codex CLI runs them once you trust the project and review its hooks (/hooks)"
		case claude.Gemini:
			note += "; Gemini CLI runs them only in a trusted folder"
		case claude.OpenCode:
			note += "; opencode gets the skills only (pickup help agents)"
		}
	}
	return note
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

func (r *run) hookCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "hook",
		Hidden:    true,
		Usage:     "run one of pickup's Claude Code hooks (installed by pickup init --claude)",
		UsageText: "pickup hook [--need N] session-start|pre-tool-use|post-tool-use|stop|session-end < HOOK-INPUT-JSON",
		Description: "Reads the JSON that Claude Code sends a hook on stdin; the owner is its session_id.\n" +
			"session-start registers the owner's lease for the Claude Code process and prints the\n" +
			"session's claims (Claude Code adds them to the context). pre-tool-use denies Edit, Write,\n" +
			"MultiEdit and NotebookEdit (any case) of board files, of .pickup/ and .git/pickup/, also\n" +
			"through a hard link, and allows the simple pickup commands an agent runs (next, claim,\n" +
			"done, release, show, list, new, ...) on the repository's own board only (no --dir or\n" +
			"$PICKUP_DIR elsewhere; `new FILE` for a file of the repository, no link out of it).\n" +
			"post-tool-use renews the lease\n" +
			"at most once a minute and prints nothing. stop, with auto_next: true in config.yaml\n" +
			"(or $PICKUP_AUTO_NEXT=1 in Claude Code's environment; =0 opts a session out), claims the\n" +
			"next session by priority for a session that stops holding none ($PICKUP_TAG and\n" +
			"$PICKUP_NOT_TAG limit it) and blocks the stop telling the agent to work on it; it feeds\n" +
			"a continuing session again only once it finished what it was fed. session-end releases what the session still\n" +
			"holds, in one commit in commit mode, or keeps it when the board's config.yaml says\n" +
			"keep_on_session_end: true. --need N: the installer needs hook protocol N (this pickup\n" +
			"has " + strconv.Itoa(claude.Protocol) + "); if higher, the hook says to upgrade pickup.\n" +
			"--agent codex|gemini: the hook runs for Codex CLI or Gemini CLI (pickup init --codex,\n" +
			"--gemini): their input and tool names, output as JSON (see `pickup help agents`).\n" +
			"A hook never fails the Claude Code session: errors go to stderr and it exits 0.",
		Flags: []ucli.Flag{
			&ucli.IntFlag{Name: "need", Usage: "the hook protocol the installer (the plugin) needs"},
			&ucli.StringFlag{Name: "agent", Value: "claude", Usage: "the agent that runs the hook: claude, codex or gemini (its input, output and tool names)"},
			&ucli.BoolFlag{Name: "detach", Usage: "session-end: do the release in a process of its own session, waiting for it at most 1 s (Claude Code cancels a plugin's SessionEnd hook after 1.5 s)"},
		},
		Action: func(c *ucli.Context) error {
			event := c.Args().First()
			if c.NArg() != 1 {
				event = "?"
			}
			a, err := claude.AgentNamed(c.String("agent"))
			if err != nil {
				fmt.Fprintf(r.env.Stderr, "pickup: hook %s: %s\n", sanitize(event), sanitize(err.Error()))
				return nil
			}
			if event == "session-end" {
				if c.Bool("detach") {
					r.detachSessionEnd(a, c.Int("need"))
					return nil
				}
				// A release cut short would leave claims to be reaped
				// as attempts, or a commit-mode release uncommitted: it
				// finishes, and so do its git children, which inherit
				// the ignored signals. SIGPIPE: its output may outlive
				// whoever read it (see detachSessionEnd).
				signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
			}
			if err := r.hook(event, a, c.Int("need"), r.env.Stdin); err != nil {
				fmt.Fprintf(r.env.Stderr, "pickup: hook %s: %s\n", sanitize(event), sanitize(err.Error()))
			}
			return nil
		},
	}
}

// hook runs one hook event with the JSON input on stdin; need is --need.
func (r *run) hook(event string, a *claude.Agent, need int, stdin io.Reader) error {
	h := r.claudeHooks()
	h.Need = need
	h.Agent = a
	return h.Run(event, stdin)
}

// claudeHooks wires the hooks to this run: the board, commit mode and the
// processes are found as for every other command, from the hook's cwd.
func (r *run) claudeHooks() *claude.Hooks {
	return &claude.Hooks{
		Stdout:  r.env.Stdout,
		Getenv:  r.env.Getenv,
		Now:     r.env.Now,
		Proc:    r.procEnv(),
		Getwd:   r.env.Getwd,
		Owner:   r.owner,
		Version: version(),
		Batch: func(b *sessions.Board) func(string) {
			return r.commits.batch(b)
		},
		BoardDir: func(cwd string) (string, error) {
			if cwd != "" {
				env := *r.env
				env.Getwd = func() (string, error) { return cwd, nil }
				r.env = &env
			}
			return r.boardDir()
		},
		Open: func(dir string) (*sessions.Board, error) {
			// lenient: a bad config.yaml must not block Claude Code
			return r.openBoard(func(string) (*sessions.Board, error) { return sessions.Open(dir) })
		},
		RepoTop: func(cwd string) string {
			if cwd == "" {
				wd, err := r.env.Getwd()
				if err != nil {
					return ""
				}
				cwd = wd
			}
			if top, ok := mainWorktree(cwd); ok {
				return top
			}
			return cwd
		},
		Invoker:  r.invokerProcess,
		Beat:     r.spawnBeat,
		Describe: describe,
	}
}

// claudeOwner returns the session that the SessionStart hook recorded for
// the Claude Code process that ran this pickup (the process a lease would
// follow: --pid, $PICKUP_PID, else the parent walk). ownerName falls back
// on it when no option or variable names the owner.
func (r *run) claudeOwner() (string, bool) {
	dir, err := r.boardDir()
	if err != nil {
		return "", false
	}
	p, err := r.invokerProcess()
	if err != nil {
		return "", false
	}
	return claude.OwnerOf(dir, p)
}

// claudeSessionProcess returns the Claude Code process that runs owner, as
// its SessionStart hook recorded it, when pickup runs as that very session:
// Claude Code sets $CLAUDE_CODE_SESSION_ID in its Bash tool's environment
// (and SessionStart exports $CLAUDE_SESSION_ID), so a command that carries
// the owner's id was started by that session, inside its sandbox or not. A
// record whose process provably exited is not used.
func (r *run) claudeSessionProcess(owner string) (proc.Process, bool) {
	if owner == "" || (owner != r.env.Getenv("CLAUDE_CODE_SESSION_ID") && owner != r.env.Getenv("CLAUDE_SESSION_ID") && owner != r.env.Getenv("CODEX_THREAD_ID")) {
		return proc.Process{}, false
	}
	dir, err := r.boardDir()
	if err != nil {
		return proc.Process{}, false
	}
	return claude.SessionProcess(dir, owner, r.procEnv())
}

// claudePluginEnabled reports whether the user's Claude Code settings
// enable pickup's plugin: $CLAUDE_CONFIG_DIR, else ~/.claude.
func (r *run) claudePluginEnabled() bool {
	dir := r.env.Getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		home := r.env.Getenv("HOME")
		if home == "" {
			return false
		}
		dir = filepath.Join(home, ".claude")
	}
	return claude.PluginEnabled(dir)
}
