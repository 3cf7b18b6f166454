package claude

import (
	"bytes"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v2"
)

// skillFront is the SKILL.md frontmatter that Claude Code reads.
type skillFront struct {
	Name                   string `yaml:"name"`
	Description            string `yaml:"description"`
	ArgumentHint           string `yaml:"argument-hint"`
	AllowedTools           string `yaml:"allowed-tools"`
	DisableModelInvocation bool   `yaml:"disable-model-invocation"`
}

func TestClaudeSkills(t *testing.T) {
	files := ProjectFiles()
	if got := SkillNames(); strings.Join(got, " ") != "handoff pickup" {
		t.Fatalf("skills = %v, want handoff and pickup", got)
	}
	for _, f := range files {
		t.Run(f.Path, func(t *testing.T) {
			if !strings.HasPrefix(f.Path, ".claude/skills/") || path.Base(f.Path) != "SKILL.md" {
				t.Fatalf("unexpected file %s", f.Path)
			}
			head, body, ok := bytes.Cut(bytes.TrimPrefix(f.Data, []byte("---\n")), []byte("\n---\n"))
			if !ok || !bytes.HasPrefix(f.Data, []byte("---\n")) {
				t.Fatal("no frontmatter")
			}
			var fm skillFront
			if err := yaml.UnmarshalStrict(head, &fm); err != nil {
				t.Fatalf("frontmatter: %v", err)
			}
			if dir := path.Base(path.Dir(f.Path)); fm.Name != dir {
				t.Errorf("name %q, want the directory's %q", fm.Name, dir)
			}
			if len(fm.Description) < 40 || len(fm.Description) > 1024 {
				t.Errorf("description of %d characters", len(fm.Description))
			}
			// allowed-tools pre-approves the agent's subcommands, one by
			// one: never Bash(pickup:*), which would approve reap, doctor
			// --fix and lock release --force too.
			var allowed []string
			for _, tool := range strings.Split(fm.AllowedTools, ", ") {
				sub, ok := strings.CutPrefix(tool, "Bash(pickup ")
				sub, ok2 := strings.CutSuffix(sub, ":*)")
				if !ok || !ok2 || !slices.Contains(AgentCommands, sub) {
					t.Errorf("allowed-tools entry %q is not an agent's pickup subcommand", tool)
				}
				allowed = append(allowed, sub)
			}
			text := string(body)
			// Every command the skill tells the agent to run is allowed
			// (the "Never" section names commands not to run).
			steps, _, _ := strings.Cut(text, "## Never")
			for _, cmd := range regexp.MustCompile("`pickup ([a-z]+)[^`]*`").FindAllStringSubmatch(steps, -1) {
				// (heartbeat: "not needed"; doctor: the user is told to run it)
				if !slices.Contains(allowed, cmd[1]) && cmd[1] != "heartbeat" && cmd[1] != "doctor" {
					t.Errorf("the skill runs %s, which its allowed-tools do not allow", cmd[0])
				}
			}
			// What to do on each exit code, for the commands it runs.
			for _, code := range []string{"0", "2", "3", "4", "5", "6", "7"} {
				if !strings.Contains(text, "\n| "+code+" | ") {
					t.Errorf("the skill does not say what to do on exit %s", code)
				}
			}
			// Skills and hooks agree on the owner because the skill names
			// none: pickup reads it from what the running Claude Code
			// session carries ($CLAUDE_CODE_SESSION_ID). An id written into
			// the text would be inherited by a forked conversation, which
			// would then act as the original.
			for _, line := range strings.Split(text, "\n") {
				for _, cmd := range regexp.MustCompile("`pickup [^`]*`").FindAllString(line, -1) {
					if strings.Contains(cmd, "--owner") {
						t.Errorf("command that names an owner: %s", cmd)
					}
				}
			}
			if strings.Contains(text, "CLAUDE_SESSION_ID}") {
				t.Error("the skill writes the session id into its text, which a fork inherits")
			}
			if !strings.Contains(text, "$ARGUMENTS") {
				t.Error("the skill ignores its arguments")
			}
			// Claude Code substitutes $0..$9 and runs !`cmd`: none by accident.
			if m := regexp.MustCompile(`\$[0-9]|(^|\s)!` + "`").FindString(text); m != "" {
				t.Errorf("accidental substitution %q", m)
			}
			flat := strings.Join(strings.Fields(text), " ")
			for _, rule := range []string{"Never edit, write, move", "Never force or delete a lock", "Never retry in a loop"} {
				if !strings.Contains(flat, rule) {
					t.Errorf("the skill does not say %q", rule)
				}
			}
		})
	}
}
