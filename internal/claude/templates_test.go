package claude

import (
	"bytes"
	"path"
	"regexp"
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
			if fm.AllowedTools != "Bash(pickup:*)" {
				t.Errorf("allowed-tools %q", fm.AllowedTools)
			}
			text := string(body)
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
			for _, rule := range []string{"by hand", "Exit 6"} {
				if !strings.Contains(text, rule) {
					t.Errorf("the skill does not say %q", rule)
				}
			}
		})
	}
}
