package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// settingsWithUserHooks is a settings.json as Claude Code writes it, with
// the user's own hooks and other settings, including strings whose escapes
// must survive as written.
const settingsWithUserHooks = `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": [
      "Bash(npm run test:*)",
      "Read(~/.zshrc)"
    ],
    "deny": []
  },
  "env": {
    "GREETING": "h\u00e9llo <b>&amp;</b>",
    "RATIO": 1.50
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/check-bash",
            "timeout": 30
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "npx prettier --write \"$CLAUDE_PROJECT_DIR\""
          }
        ]
      }
    ],
    "Notification": []
  },
  "statusLine": {
    "type": "command",
    "command": "~/.claude/statusline.sh"
  },
  "includeCoAuthoredBy": false
}
`

func TestInstallClaudeMergesIntoExistingSettings(t *testing.T) {
	repo := clRepo(t)
	settings := filepath.Join(repo, ".claude", "settings.local.json")
	wtFile(t, repo, ".claude/settings.local.json", settingsWithUserHooks)
	wtFile(t, repo, ".claude/settings.json", `{"model": "opus"}`)
	wtFile(t, repo, ".claude/skills/review/SKILL.md", "---\nname: review\n---\nmine\n")

	clInstall(t, repo, false)
	got := clRead(t, settings)
	var doc map[string]any
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("merged settings.json is not valid JSON: %v\n%s", err, got)
	}
	// Everything of the user's is there, as written.
	for _, want := range []string{`"GREETING": "h\u00e9llo <b>&amp;</b>"`, `"RATIO": 1.50`, `"command": "/usr/local/bin/check-bash"`,
		`"command": "npx prettier --write \"$CLAUDE_PROJECT_DIR\""`, `"Notification": []`, `exec pickup hook stop`, `"includeCoAuthoredBy": false`} {
		if !strings.Contains(got, want) {
			t.Errorf("merged settings.json lost %s:\n%s", want, got)
		}
	}
	// pickup's PostToolUse group comes after the user's, in the same array.
	post := doc["hooks"].(map[string]any)["PostToolUse"].([]any)
	if len(post) != 2 || post[0].(map[string]any)["matcher"] != "Edit|Write" || post[1].(map[string]any)["matcher"] != "*" {
		t.Errorf("PostToolUse = %v; want the user's group, then pickup's", post)
	}
	// Keys keep their order; new ones come last.
	if i, j := strings.Index(got, `"permissions"`), strings.Index(got, `"statusLine"`); i < 0 || j < i {
		t.Errorf("key order changed:\n%s", got)
	}
	if i, j := strings.Index(got, `"Notification"`), strings.Index(got, `"SessionStart"`); j < i {
		t.Errorf("SessionStart was not added after the user's events:\n%s", got)
	}

	// A second run is byte-stable.
	for _, ch := range clInstall(t, repo, false) {
		if ch.Action != "unchanged" {
			t.Errorf("second install: %s %s", ch.Action, ch.Path)
		}
	}
	if again := clRead(t, settings); again != got {
		t.Errorf("second install changed settings.json:\n%s", again)
	}

	// Uninstall restores the original byte for byte, and leaves the
	// user's other files alone.
	clInstall(t, repo, true)
	if restored := clRead(t, settings); restored != settingsWithUserHooks {
		t.Errorf("uninstall left\n%s\nwant the original\n%s", restored, settingsWithUserHooks)
	}
	if got := clRead(t, filepath.Join(repo, ".claude", "settings.json")); got != `{"model": "opus"}` {
		t.Errorf("settings.json changed: %s", got)
	}
	if _, err := os.Stat(filepath.Join(repo, ".claude", "skills", "review", "SKILL.md")); err != nil {
		t.Errorf("the user's skill is gone: %v", err)
	}
	for _, name := range SkillNames() {
		if _, err := os.Stat(filepath.Join(repo, ".claude", "skills", name)); err == nil {
			t.Errorf("skill %s survived uninstall", name)
		}
	}
}

// A file in another layout is merged without losing anything; uninstall
// gives back the same settings (in Claude Code's own layout).
func TestInstallClaudeOtherLayout(t *testing.T) {
	repo := clRepo(t)
	orig := `{"hooks":{"Notification":[{"hooks":[{"type":"command","command":"notify-send done"}]}]},` +
		"\n\t\"env\": {\"A\": \"1\"}, \"n\": 1e3, \"nested\": [[], {}, [1, [2]]]}"
	wtFile(t, repo, ".claude/settings.local.json", orig)
	clInstall(t, repo, false)
	merged := clRead(t, filepath.Join(repo, ".claude", "settings.local.json"))
	if !strings.Contains(merged, `"n": 1e3`) {
		t.Errorf("a number was rewritten:\n%s", merged)
	}
	clInstall(t, repo, true)
	var want, got any
	if err := json.Unmarshal([]byte(orig), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(clRead(t, filepath.Join(repo, ".claude", "settings.local.json"))), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after uninstall: %v\nwant %v", got, want)
	}
}

func TestInstallClaudeRefusesInvalidJSON(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
		syntax              bool // uninstall refuses it too, and so does install in settings.json
	}{
		{"trailing comma", "{\n  \"hooks\": {\n    \"Stop\": [],\n  }\n}\n", "line 4, column 3", true},
		{"comment", "{\n  // mine\n  \"a\": 1\n}\n", "line 2, column 3", true},
		{"truncated", "{\n  \"a\": [1,\n", "line 3", true},
		{"not an object", "[1, 2]\n", "must be a JSON object", true},
		{"hooks not an object", "{\"hooks\": [\"x\"]}\n", `"hooks" is not an object`, false},
		{"event not an array", "{\"hooks\": {\"SessionEnd\": {}}}\n", `"hooks.SessionEnd" is not an array`, false},
	} {
		for _, file := range []string{SettingsFile, SharedSettingsFile} {
			if file == SharedSettingsFile && !tc.syntax {
				continue // pickup only removes from settings.json: its shape is not pickup's concern
			}
			t.Run(tc.name+" in "+file, func(t *testing.T) {
				repo := clRepo(t)
				wtFile(t, repo, file, tc.content)
				before := clSnapshot(t, repo)
				_, err := Install(repo, false, false)
				if err == nil {
					t.Fatal("Install accepted it")
				}
				settings := filepath.Join(repo, filepath.FromSlash(file))
				if msg := err.Error(); !strings.Contains(msg, settings) || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "nothing was changed") {
					t.Errorf("error %q; want the file, %q and that nothing was changed", msg, tc.want)
				}
				if after := clSnapshot(t, repo); !reflect.DeepEqual(before, after) {
					t.Errorf("something changed: %v", after)
				}
				if _, err := Install(repo, true, false); (err != nil) != tc.syntax {
					t.Errorf("uninstall: %v", err)
				}
				if after := clSnapshot(t, repo); !reflect.DeepEqual(before, after) {
					t.Errorf("uninstall changed something: %v", after)
				}
			})
		}
	}
}

// An install by an earlier pickup (its hooks in settings.json, where
// Claude Code reads them only when started in the top folder) moves: the
// old entries leave settings.json, the user's stay, and the current hooks
// go into settings.local.json.
func TestInstallClaudeMovesOldHooksOutOfSettingsJSON(t *testing.T) {
	repo := clRepo(t)
	wtFile(t, repo, ".claude/settings.json", `{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {
            "type": "command",
            "command": "direnv export json"
          },
          {
            "type": "command",
            "command": "pickup hook session-start"
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "pickup hook session-end"
          }
        ]
      }
    ]
  }
}
`)
	changes := clInstall(t, repo, false)
	shared := clRead(t, filepath.Join(repo, ".claude", "settings.json"))
	if strings.Contains(shared, "pickup hook") || !strings.Contains(shared, "direnv export json") || !strings.Contains(shared, `"matcher": "startup"`) {
		t.Errorf("settings.json should keep exactly the user's hook:\n%s", shared)
	}
	if strings.Contains(shared, "SessionEnd") {
		t.Errorf("the event array that held only pickup's hook stayed:\n%s", shared)
	}
	local := clRead(t, filepath.Join(repo, ".claude", "settings.local.json"))
	for _, ev := range hookEvents() {
		if !strings.Contains(local, `"`+ev+`"`) {
			t.Errorf("settings.local.json lacks %s:\n%s", ev, local)
		}
	}
	var actions []string
	for _, ch := range changes {
		actions = append(actions, ch.Action+" "+filepath.Base(ch.Path))
	}
	if want := "created settings.local.json, updated settings.json"; !strings.Contains(strings.Join(actions, ", "), want) {
		t.Errorf("changes %v; want %s", actions, want)
	}
}

// An entry of another pickup version is replaced; pickup's entry that the
// user moved into a group of their own counts as installed.
func TestInstallClaudeReplacesOnlyPickupEntries(t *testing.T) {
	repo := clRepo(t)
	start := pluginHooks().get("SessionStart").elems[0].get("hooks").elems[0]
	wtFile(t, repo, SettingsFile, `{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {
            "type": "command",
            "command": "direnv export json"
          },
          `+string(start.encode())+`
        ]
      }
    ],
    "SessionEnd": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "pickup hook session-end --old-flag"
          }
        ]
      }
    ]
  }
}
`)
	clInstall(t, repo, false)
	path := filepath.Join(repo, filepath.FromSlash(SettingsFile))
	got := clRead(t, path)
	if strings.Contains(got, "--old-flag") {
		t.Errorf("the old pickup entry stayed:\n%s", got)
	}
	if strings.Count(got, "pickup hook --need 4 session-start") != 1 || strings.Count(got, "exec pickup hook --detach session-end") != 1 {
		t.Errorf("want one entry per event:\n%s", got)
	}
	if strings.Index(got, "direnv") > strings.Index(got, "session-start") {
		t.Errorf("the moved entry was not left where the user put it:\n%s", got)
	}
	clInstall(t, repo, true)
	got = clRead(t, path)
	if strings.Contains(got, "pickup hook") || !strings.Contains(got, "direnv export json") || !strings.Contains(got, `"matcher": "startup"`) {
		t.Errorf("uninstall should leave exactly the user's hook:\n%s", got)
	}
}
