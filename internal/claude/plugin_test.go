package claude

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The plugin's files are what Claude Code reads: their shape is checked
// here; `claude plugin validate` checks them against Claude Code itself
// (README, "Claude Code").

type hooksFile struct {
	Hooks map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string `json:"type"`
			If      string `json:"if"`
			Command string `json:"command"`
			Timeout int    `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestPluginHooks(t *testing.T) {
	var hf struct {
		Description string `json:"description"`
		hooksFile
	}
	data, err := os.ReadFile("plugin/hooks/hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &hf); err != nil {
		t.Fatal(err)
	}
	events := map[string]string{"SessionStart": "session-start", "PreToolUse": "pre-tool-use", "PostToolUse": "post-tool-use", "PostToolUseFailure": "post-tool-use", "Stop": "stop", "SessionEnd": "session-end"}
	if len(hf.Hooks) != len(events) {
		t.Errorf("hooks.json has events %v, want %v", hf.Hooks, events)
	}
	sh, shErr := exec.LookPath("sh")
	for event, groups := range hf.Hooks {
		sub, ok := events[event]
		if !ok || !slices.Contains(Events, sub) {
			t.Errorf("event %s is not one pickup hook handles", event)
		}
		for _, g := range groups {
			if len(g.Hooks) != 1 {
				t.Errorf("%s %q: %d hooks in a group, want 1 (init --claude adds groups whole)", event, g.Matcher, len(g.Hooks))
				continue
			}
			h := g.Hooks[0]
			runs := strings.Contains(h.Command, hookPrefix+sub) || strings.Contains(h.Command, fmt.Sprintf("%s--need %d %s", hookPrefix, Protocol, sub))
			if sub == "session-end" {
				// Released in a process of its own, in time for Claude
				// Code's budget (see cli's detachSessionEnd).
				runs = strings.Contains(h.Command, hookPrefix+"--detach "+sub)
			}
			if h.Type != "command" || !runs {
				t.Errorf("%s: command %q does not run %s%s", event, h.Command, hookPrefix, sub)
			}
			if strings.Contains(h.Command, "CLAUDE_PLUGIN_ROOT") {
				t.Errorf("%s: the plugin ships no programs: %q", event, h.Command)
			}
			// Claude Code runs the command with sh -c: it must parse.
			if shErr == nil {
				if out, err := exec.Command(sh, "-n", "-c", h.Command).CombinedOutput(); err != nil {
					t.Errorf("%s: sh -n: %v: %s", event, err, out)
				}
			}
			if h.Timeout == 0 {
				t.Errorf("%s: no timeout", event)
			}
		}
	}
	// SessionEnd's default is 1.5 s: a commit-mode release needs more.
	if end := hf.Hooks["SessionEnd"]; len(end) != 1 || end[0].Hooks[0].Timeout < 30 {
		t.Errorf("SessionEnd = %+v, want a timeout of 30 s or more", end)
	}
	// The Bash guard runs only for pickup commands; the file guard for
	// every tool that writes a file.
	var matchers []string
	for _, g := range hf.Hooks["PreToolUse"] {
		matchers = append(matchers, g.Matcher+" if "+g.Hooks[0].If)
	}
	if want := []string{"Bash if Bash(pickup *)", "Edit|Write|MultiEdit|NotebookEdit if "}; !slices.Equal(matchers, want) {
		t.Errorf("PreToolUse groups %q, want %q", matchers, want)
	}
	if !strings.Contains(hf.Hooks["SessionStart"][0].Hooks[0].Command, fmt.Sprintf("%s--need %d session-start", hookPrefix, Protocol)) {
		t.Errorf("SessionStart does not check the protocol %d", Protocol)
	}
}

func TestPluginManifests(t *testing.T) {
	var manifest struct {
		Name        string         `json:"name"`
		Version     string         `json:"version"`
		Description string         `json:"description"`
		Author      map[string]any `json:"author"`
		Homepage    string         `json:"homepage"`
		Repository  string         `json:"repository"`
		Keywords    []string       `json:"keywords"`
		License     string         `json:"license"`
	}
	readJSON(t, "plugin/.claude-plugin/plugin.json", &manifest)
	if manifest.Name != "pickup" || manifest.Version == "" || !strings.Contains(manifest.Description, "go install github.com/pickup-dev/pickup@latest") {
		t.Errorf("plugin.json: %+v", manifest)
	}
	var market struct {
		Name     string         `json:"name"`
		Owner    map[string]any `json:"owner"`
		Metadata map[string]any `json:"metadata"`
		Plugins  []struct {
			Name        string `json:"name"`
			Source      string `json:"source"`
			Description string `json:"description"`
			Category    string `json:"category"`
		} `json:"plugins"`
	}
	readJSON(t, "../../.claude-plugin/marketplace.json", &market)
	if len(market.Plugins) != 1 || market.Plugins[0].Name != manifest.Name {
		t.Fatalf("marketplace.json plugins: %+v", market.Plugins)
	}
	// The source is this package's plugin directory, relative to the
	// repository's top.
	src := filepath.Join("../..", filepath.FromSlash(market.Plugins[0].Source))
	if abs, _ := filepath.Abs(src); abs != mustAbs(t, "plugin") {
		t.Errorf("marketplace source %s is not internal/claude/plugin", market.Plugins[0].Source)
	}
	// No programs in the plugin: it runs the pickup on the PATH.
	_ = filepath.WalkDir("plugin", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, _ := d.Info(); info.Mode()&0o111 != 0 {
				t.Errorf("%s is executable: the plugin ships no programs", p)
			}
		}
		return nil
	})
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// Run by sh as Claude Code runs it, the SessionStart hook names the three
// ways to install pickup when there is none on the PATH, and the ways to
// upgrade when the one there is too old to know --need.
func TestPluginHooksSayHowToInstall(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("no sh: Claude Code runs hook commands with it")
	}
	var hf hooksFile
	data, err := os.ReadFile("plugin/hooks/hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &hf); err != nil {
		t.Fatal(err)
	}
	command := hf.Hooks["SessionStart"][0].Hooks[0].Command
	run := func(path string) string {
		t.Helper()
		cmd := exec.Command(sh, "-c", command)
		cmd.Env = []string{"PATH=" + path}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the SessionStart hook failed (it must exit 0 and say what to do): %v\n%s", err, out)
		}
		return string(out)
	}

	empty := t.TempDir()
	if out := run(empty); !strings.Contains(out, "not on the PATH") || !strings.Contains(out, InstallWays) {
		t.Errorf("with no pickup on the PATH the hook printed\n%s\nwant it to name the three ways to install:\n%s", out, InstallWays)
	}

	// A pickup from before --need fails on the flag.
	old := t.TempDir()
	if err := os.WriteFile(filepath.Join(old, "pickup"), []byte("#!/bin/sh\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out := run(old); !strings.Contains(out, "older than") || !strings.Contains(out, UpgradeWays) {
		t.Errorf("with an old pickup on the PATH the hook printed\n%s\nwant it to name the ways to upgrade:\n%s", out, UpgradeWays)
	}
}
