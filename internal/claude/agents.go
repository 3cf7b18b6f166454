package claude

import (
	"embed"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// The coding agents pickup sets up. Claude Code was the first; Codex CLI,
// Gemini CLI and opencode take the same hooks (`pickup hook --agent NAME
// EVENT`) and the same skills, through one code path: an Agent says where
// its settings file is, which events its hooks are under, how it reads a
// hook's output and names its tools. Everything else (leases, the guard of
// board files, auto_next, the release at the end) is the same code for all.

//go:embed agents/codex/hooks.json agents/gemini/settings.json agents/gemini/commands/pickup.toml
var agentsFS embed.FS

// Agent is one coding agent that pickup sets up.
type Agent struct {
	// Name is what `pickup init --NAME` and `pickup hook --agent NAME`
	// take.
	Name string
	// Title names the agent for people: "Codex CLI".
	Title string
	// Settings is the file pickup merges its hooks into, relative to the
	// top of the repository; "" for an agent without command hooks
	// (opencode).
	Settings string
	// hooks is the embedded file whose "hooks" object pickup merges in.
	hooks string
	// skillsDir is where the /pickup and /handoff skills go.
	skillsDir string
	// extra are embedded files installed as they are: path in agentsFS ->
	// path in the repository.
	extra map[string]string
	// jsonOutput: the agent reads a hook's stdout as JSON only (Gemini
	// CLI), or takes SessionStart's context as JSON (Codex CLI): plain
	// text is wrapped or dropped.
	jsonOutput bool
	// allows: the agent takes a PreToolUse "allow" (Claude Code only;
	// Codex CLI 0.171 rejects permissionDecision "allow").
	allows bool
	// shellTools and editTools are the agent's tool names (lower case)
	// that run a shell command and that write a file.
	shellTools, editTools []string
}

// SharedSkillsDir is where Codex CLI, Gemini CLI and opencode all read
// skills from.
const SharedSkillsDir = ".agents/skills"

// The agents, by name.
var (
	Claude = &Agent{Name: "claude", Title: "Claude Code", Settings: SettingsFile, hooks: "plugin/hooks/hooks.json",
		skillsDir: ".claude/skills", allows: true,
		shellTools: []string{"bash"}, editTools: []string{"edit", "write", "multiedit", "notebookedit"}}
	Codex = &Agent{Name: "codex", Title: "Codex CLI", Settings: ".codex/hooks.json", hooks: "agents/codex/hooks.json",
		skillsDir: SharedSkillsDir, jsonOutput: true,
		shellTools: []string{"bash", "shell", "exec_command", "local_shell"}, editTools: []string{"apply_patch", "edit", "write"}}
	Gemini = &Agent{Name: "gemini", Title: "Gemini CLI", Settings: ".gemini/settings.json", hooks: "agents/gemini/settings.json",
		skillsDir: SharedSkillsDir, jsonOutput: true,
		extra:      map[string]string{"agents/gemini/commands/pickup.toml": ".gemini/commands/pickup.toml"},
		shellTools: []string{"run_shell_command"}, editTools: []string{"write_file", "replace", "edit"}}
	OpenCode = &Agent{Name: "opencode", Title: "opencode", skillsDir: SharedSkillsDir}
)

// Agents lists every agent pickup sets up.
func Agents() []*Agent { return []*Agent{Claude, Codex, Gemini, OpenCode} }

// AgentNamed returns the agent called name.
func AgentNamed(name string) (*Agent, error) {
	var names []string
	for _, a := range Agents() {
		if a.Name == name {
			return a, nil
		}
		names = append(names, a.Name)
	}
	return nil, fmt.Errorf("unknown agent %q: give one of %s", name, strings.Join(names, ", "))
}

// readTemplate returns an embedded file of the plugin or of agents/.
func readTemplate(name string) []byte {
	var data []byte
	var err error
	if strings.HasPrefix(name, "plugin/") {
		data, err = pluginFS.ReadFile(name)
	} else {
		data, err = agentsFS.ReadFile(name)
	}
	if err != nil {
		panic("claude: " + err.Error()) // embedded: fixed at build time
	}
	return data
}

// hookTemplate returns the "hooks" object the agent's settings get; nil
// for an agent without hooks.
func (a *Agent) hookTemplate() *ojValue {
	if a.hooks == "" {
		return nil
	}
	v, err := parseOJ(readTemplate(a.hooks))
	if err != nil {
		panic("claude: " + a.hooks + ": " + err.Error()) // fixed at build time; a test parses it
	}
	return v.get("hooks")
}

// HookEvents returns the agent's events that pickup hooks, in its
// template's order.
func (a *Agent) HookEvents() []string {
	t := a.hookTemplate()
	if t == nil {
		return nil
	}
	var events []string
	for _, m := range t.members {
		events = append(events, m.key)
	}
	return events
}

// Files returns what the agent's setup installs besides the hooks: the
// skills, and its extra files, in a stable order.
func (a *Agent) Files() []File {
	var out []File
	for _, f := range ProjectFiles() {
		rel := strings.TrimPrefix(f.Path, ".claude/skills/")
		data := f.Data
		if a != Claude {
			data = neutralSkill(data)
		}
		out = append(out, File{Path: a.skillsDir + "/" + rel, Data: data})
	}
	for _, src := range slices.Sorted(maps.Keys(a.extra)) {
		out = append(out, File{Path: a.extra[src], Data: readTemplate(src)})
	}
	return out
}

// neutralSkill turns one of the plugin's skills (written for Claude Code)
// into the one every other agent reads from .agents/skills/: the same
// steps, without what only Claude Code understands (allowed-tools,
// argument-hint, $ARGUMENTS, $CLAUDE_CODE_SESSION_ID). A test checks that
// nothing of Claude Code's is left, so that an edit of the plugin's skills
// that these replacements miss fails there, not in an agent.
func neutralSkill(data []byte) []byte {
	s := string(data)
	var kept []string
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(line, "allowed-tools:") || strings.HasPrefix(line, "argument-hint:") {
			continue
		}
		kept = append(kept, line)
	}
	s = strings.Join(kept, "")
	for _, r := range [][2]string{
		{"Every pickup command you run acts as this Claude Code session (pickup reads its id from\n`$CLAUDE_CODE_SESSION_ID`): never pass `--owner`.",
			"Every pickup command you run acts as this agent session (pickup's hooks recorded it): never\npass `--owner`."},
		{"pickup acts as this Claude Code session by itself", "pickup acts as this agent session by itself"},
		{"Session asked for: `$ARGUMENTS` (empty: take the best available one).",
			"Session asked for: the id the user named, if any (none: take the best available one)."},
		{"The user's notes:\n`$ARGUMENTS` (a leading high, medium or low is the priority).",
			"The user's notes, if\nany, come with the request (a leading high, medium or low is the priority)."},
		{"`/handoff`", "the handoff skill"},
	} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return []byte(s)
}

// skillDirs are the directories of the agent's skills.
func (a *Agent) skillDirs() []string {
	var dirs []string
	for _, f := range a.Files() {
		if d := path.Dir(f.Path); strings.HasPrefix(d, a.skillsDir+"/") {
			dirs = append(dirs, d)
		}
	}
	return dirs
}
