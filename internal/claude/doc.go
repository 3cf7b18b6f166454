// Package claude is pickup's Claude Code integration: the skills (/pickup,
// /handoff) and hooks, shipped both as a Claude Code plugin (the plugin/
// directory, which is also their one source) and as a project-local install
// into a repository's .claude/ (`pickup init --claude`), and the hooks'
// behaviour itself (`pickup hook EVENT`).
//
// The same code sets up Codex CLI, Gemini CLI and opencode (agents.go:
// `pickup init --codex|--gemini|--opencode`, `pickup hook --agent NAME
// EVENT`): an Agent names its settings file, its events, its tool names and
// the form it reads a hook's output in; leases, the guard of board files,
// auto_next and the release at the end are shared. The other agents' skills
// are the plugin's, made neutral (neutralSkill), in .agents/skills/.
//
// Owners. A hook's owner is the session_id Claude Code sends on stdin. The
// agent's own pickup commands act as the same owner without naming it:
// Claude Code sets $CLAUDE_CODE_SESSION_ID for the commands of each session
// (a fork gets its own), the SessionStart hook exports $CLAUDE_SESSION_ID
// through $CLAUDE_ENV_FILE for versions that do not, and it records the
// session under <board>/.pickup/claude/ for the Claude Code process
// (OwnerOf, SessionProcess), for commands that carry no owner at all or
// run in the Bash sandbox's own pid namespace.
package claude
