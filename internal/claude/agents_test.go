package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// codexUserHooks is a .codex/hooks.json with a hook of the user's.
const codexUserHooks = `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {"type": "command", "command": "/usr/local/bin/audit \"$1\"", "timeout": 5}
        ]
      }
    ]
  }
}
`

// geminiUserSettings is a .gemini/settings.json with settings and a hook
// of the user's.
const geminiUserSettings = `{
  "model": {"name": "gemini-2.5-pro"},
  "hooks": {
    "BeforeTool": [
      {"matcher": "write_file", "hooks": [{"name": "lint", "type": "command", "command": "npm run lint"}]}
    ]
  },
  "ui": {"theme": "GitHub"}
}
`

func TestInstallAgentsMergeAndUninstall(t *testing.T) {
	for _, tc := range []struct {
		agent *Agent
		user  string
		keep  []string // what of the user's must survive, as written
	}{
		{Codex, codexUserHooks, []string{`"command": "/usr/local/bin/audit \"$1\""`, `"matcher": "Bash"`}},
		{Gemini, geminiUserSettings, []string{`"command": "npm run lint"`, `"theme": "GitHub"`, `"name": "gemini-2.5-pro"`}},
	} {
		t.Run(tc.agent.Name, func(t *testing.T) {
			repo := clRepo(t)
			settings := filepath.Join(repo, filepath.FromSlash(tc.agent.Settings))
			wtFile(t, repo, tc.agent.Settings, tc.user)
			before := clSnapshot(t, repo)
			if _, err := InstallAgent(repo, tc.agent, false, false); err != nil {
				t.Fatal(err)
			}
			got := clRead(t, settings)
			var doc map[string]any
			if err := json.Unmarshal([]byte(got), &doc); err != nil {
				t.Fatalf("merged %s is not JSON: %v\n%s", tc.agent.Settings, err, got)
			}
			for _, want := range tc.keep {
				if !strings.Contains(got, want) {
					t.Errorf("merged settings lost %s:\n%s", want, got)
				}
			}
			for _, ev := range tc.agent.HookEvents() {
				if !strings.Contains(got, `"`+ev+`"`) || !strings.Contains(got, "pickup hook --agent "+tc.agent.Name) {
					t.Errorf("merged settings lack pickup's %s hook:\n%s", ev, got)
				}
			}
			for _, f := range tc.agent.Files() {
				if data := clRead(t, filepath.Join(repo, filepath.FromSlash(f.Path))); data != string(f.Data) {
					t.Errorf("%s differs from pickup's", f.Path)
				}
			}
			// A second install changes nothing.
			again, err := InstallAgent(repo, tc.agent, false, false)
			if err != nil {
				t.Fatal(err)
			}
			if AnyChanged(again) {
				t.Errorf("second install changed %+v", again)
			}
			// Uninstall leaves exactly what was there before.
			if _, err := InstallAgent(repo, tc.agent, true, false); err != nil {
				t.Fatal(err)
			}
			after := clSnapshot(t, repo)
			// The user's file is rewritten in pickup's layout when it
			// changed; compare it as JSON, everything else as bytes.
			var want, have any
			_ = json.Unmarshal([]byte(before[filepath.FromSlash(tc.agent.Settings)]), &want)
			_ = json.Unmarshal([]byte(after[filepath.FromSlash(tc.agent.Settings)]), &have)
			if !reflect.DeepEqual(want, have) {
				t.Errorf("uninstall left %s as\n%s\nwant\n%s", tc.agent.Settings, after[filepath.FromSlash(tc.agent.Settings)], tc.user)
			}
			delete(before, filepath.FromSlash(tc.agent.Settings))
			delete(after, filepath.FromSlash(tc.agent.Settings))
			if !reflect.DeepEqual(before, after) {
				t.Errorf("uninstall left\n%v\nwant\n%v", after, before)
			}
		})
	}
}

// The skills in .agents/skills/ are shared: uninstalling one agent keeps
// them while another agent's hooks are still installed.
func TestSharedSkillsKeptForAnotherAgent(t *testing.T) {
	repo := clRepo(t)
	for _, a := range []*Agent{Codex, Gemini} {
		if _, err := InstallAgent(repo, a, false, false); err != nil {
			t.Fatal(err)
		}
	}
	changes, err := InstallAgent(repo, Codex, true, false)
	if err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(repo, ".agents", "skills", "pickup", "SKILL.md")
	if _, err := os.Stat(skill); err != nil {
		t.Fatalf("uninstalling Codex CLI removed the skill Gemini CLI reads: %v (%+v)", err, changes)
	}
	if _, err := os.Stat(filepath.Join(repo, ".codex")); err == nil {
		t.Errorf(".codex/ is left after uninstalling the only thing in it")
	}
	if _, err := InstallAgent(repo, Gemini, true, false); err != nil {
		t.Fatal(err)
	}
	if left := clSnapshot(t, repo); len(left) != 1 { // the repository folder itself
		t.Errorf("uninstalling both left %v", left)
	}
}

// The skills the other agents read say nothing that only Claude Code
// understands: an edit of the plugin's skills that neutralSkill does not
// cover fails here.
func TestNeutralSkills(t *testing.T) {
	for _, f := range Codex.Files() {
		if !strings.HasPrefix(f.Path, SharedSkillsDir+"/") {
			continue
		}
		text := string(f.Data)
		for _, bad := range []string{"Claude", "CLAUDE", "$ARGUMENTS", "allowed-tools", "argument-hint", "/handoff"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s says %q:\n%s", f.Path, bad, text)
			}
		}
		if !strings.HasPrefix(text, "---\nname: ") || !strings.Contains(text, "\ndescription: ") {
			t.Errorf("%s lacks the name and description frontmatter every agent needs", f.Path)
		}
	}
}

func TestAgentHookTemplates(t *testing.T) {
	for _, a := range []*Agent{Codex, Gemini} {
		tmpl := a.hookTemplate()
		if tmpl == nil || len(tmpl.members) != 5 {
			t.Fatalf("%s: %d events, want 5", a.Name, len(tmpl.members))
		}
		for _, ev := range tmpl.members {
			for _, g := range ev.val.elems {
				h := g.get("hooks").elems[0]
				cmd, _ := h.getString("command")
				if !strings.Contains(cmd, hookPrefix+"--agent "+a.Name+" ") && !strings.Contains(cmd, hookPrefix+"--agent "+a.Name+" --detach ") {
					t.Errorf("%s %s: %q does not run pickup hook --agent %s", a.Name, ev.key, cmd, a.Name)
				}
			}
		}
	}
}

// runAgentHook runs one hook event with the input an agent sends.
func (f *fixture) runAgentHook(a *Agent, event string, in map[string]any) string {
	f.t.Helper()
	in["session_id"], in["cwd"] = sessA, f.repo
	data, _ := json.Marshal(in)
	h := f.hooks()
	h.Agent = a
	if err := h.Run(event, strings.NewReader(string(data))); err != nil {
		f.t.Fatalf("%s %s: %v", a.Name, event, err)
	}
	return f.stdout.String()
}

// Codex CLI and Gemini CLI read SessionStart's context as JSON, and
// Gemini CLI any other stdout as JSON too: the hooks print nothing else.
func TestAgentHookOutputs(t *testing.T) {
	for _, a := range []*Agent{Codex, Gemini} {
		t.Run(a.Name, func(t *testing.T) {
			f := newFixture(t)
			id := f.newSession("Held")
			out := f.runAgentHook(a, "session-start", map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
			var start struct {
				HookSpecificOutput struct {
					HookEventName     string `json:"hookEventName"`
					AdditionalContext string `json:"additionalContext"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal([]byte(out), &start); err != nil {
				t.Fatalf("session-start printed %q: %v", out, err)
			}
			if c := start.HookSpecificOutput.AdditionalContext; start.HookSpecificOutput.HookEventName != "SessionStart" ||
				!strings.Contains(c, "this "+a.Title+" session is owner "+sessA) {
				t.Errorf("session-start context %+v", start.HookSpecificOutput)
			}
			if l, ok := f.lease(sessA); !ok || len(l.Holders) != 1 || l.Holders[0].PID != f.claude.Process.Pid {
				t.Errorf("lease after session-start: %+v (%v), want one holder, the agent", l, ok)
			}
			f.claim(sessA, id)
			if out := f.runAgentHook(a, "session-end", map[string]any{"hook_event_name": "SessionEnd", "reason": "exit"}); out != "" {
				t.Errorf("session-end printed %q, want nothing", out)
			}
			if !f.inTodo(id) {
				t.Errorf("session-end did not give back %s", id)
			}
		})
	}
}

func TestAgentPreToolUse(t *testing.T) {
	f := newFixture(t)
	id := f.newSession("Held")
	target := filepath.Join(boardRel, "todo", id+".md")
	for _, tc := range []struct {
		agent *Agent
		tool  string
		input map[string]any
		deny  bool
	}{
		{Codex, "Bash", map[string]any{"command": "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: " + target + "\n*** End Patch\nEOF\n"}, true},
		{Codex, "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Update File: README.md\n*** Move to: " + target + "\n*** End Patch"}, true},
		{Codex, "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Update File: README.md\n*** End Patch"}, false},
		{Codex, "Bash", map[string]any{"command": "pickup next"}, false}, // Codex CLI takes no "allow"
		{Gemini, "write_file", map[string]any{"file_path": target, "content": "x"}, true},
		{Gemini, "replace", map[string]any{"file_path": filepath.Join(f.repo, target), "old_string": "a", "new_string": "b"}, true},
		{Gemini, "write_file", map[string]any{"file_path": "notes.md", "content": "x"}, false},
		{Gemini, "run_shell_command", map[string]any{"command": "pickup next"}, false},
	} {
		out := f.runAgentHook(tc.agent, "pre-tool-use", map[string]any{"tool_name": tc.tool, "tool_input": tc.input})
		if !tc.deny {
			if out != "" {
				t.Errorf("%s %s %v: printed %q, want nothing (the agent's own rules decide)", tc.agent.Name, tc.tool, tc.input, out)
			}
			continue
		}
		var decision, reason string
		if tc.agent == Gemini {
			var g struct{ Decision, Reason string }
			_ = json.Unmarshal([]byte(out), &g)
			decision, reason = g.Decision, g.Reason
		} else {
			var c preToolDecision
			_ = json.Unmarshal([]byte(out), &c)
			decision, reason = c.HookSpecificOutput.PermissionDecision, c.HookSpecificOutput.PermissionDecisionReason
		}
		if decision != "deny" || !strings.Contains(reason, "pickup done ID") {
			t.Errorf("%s %s %v: printed %q, want a deny that says what to use", tc.agent.Name, tc.tool, tc.input, out)
		}
	}
	if !f.inTodo(id) {
		t.Errorf("the session moved")
	}
}
