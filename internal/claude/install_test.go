package claude

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pickup-dev/pickup/sessions"
)

func clRepo(t *testing.T) string {
	t.Helper()
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

func clInstall(t *testing.T, repo string, uninstall bool) []Change {
	t.Helper()
	changes, err := Install(repo, uninstall, false)
	if err != nil {
		t.Fatalf("installClaude(uninstall=%v): %v", uninstall, err)
	}
	return changes
}

func clRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// clSnapshot returns every file under dir with its content.
func clSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			files[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func wtFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func wtDir(t *testing.T, root, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(rel)), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestInstallClaudeFresh(t *testing.T) {
	repo := clRepo(t)
	clInstall(t, repo, false)
	// The hooks are hooks.json's, as they are: one source for the
	// plugin and the project install.
	want := &ojValue{kind: '{'}
	want.add("hooks", pluginHooks())
	if got := clRead(t, filepath.Join(repo, filepath.FromSlash(SettingsFile))); got != string(want.encode()) {
		t.Errorf("%s =\n%s\nwant\n%s", SettingsFile, got, want.encode())
	}
	if _, err := os.Stat(filepath.Join(repo, filepath.FromSlash(SharedSettingsFile))); err == nil {
		t.Errorf("%s was created", SharedSettingsFile)
	}
	for _, f := range ProjectFiles() {
		if got := clRead(t, filepath.Join(repo, f.Path)); got != string(f.Data) {
			t.Errorf("%s differs from its template", f.Path)
		}
	}
	// Idempotent: a second run changes nothing.
	before := clSnapshot(t, repo)
	for _, ch := range clInstall(t, repo, false) {
		if ch.Action != "unchanged" {
			t.Errorf("second install: %s %s", ch.Action, ch.Path)
		}
	}
	if after := clSnapshot(t, repo); !reflect.DeepEqual(before, after) {
		t.Errorf("second install changed the tree")
	}
	// Uninstall removes exactly what was added: nothing is left.
	clInstall(t, repo, true)
	if left := clSnapshot(t, repo); len(left) != 1 { // "./"
		t.Errorf("after uninstall the repository holds %v", left)
	}
}

func TestInstallClaudeKeepsEditedSkills(t *testing.T) {
	repo := clRepo(t)
	clInstall(t, repo, false)
	edited := filepath.Join(repo, ".claude", "skills", "pickup", "SKILL.md")
	if err := os.WriteFile(edited, []byte("my own version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, uninstall := range []bool{false, true} {
		var kept bool
		for _, ch := range clInstall(t, repo, uninstall) {
			if ch.Path == edited {
				kept = ch.Action == "kept"
			}
		}
		if !kept || clRead(t, edited) != "my own version\n" {
			t.Errorf("uninstall=%v did not keep the edited skill", uninstall)
		}
	}
}

// A settings.json that is a symlink (a dotfiles manager's, or one a cloned
// repository committed to point at the user's own settings) is refused,
// install and uninstall alike: its target stays as it was, and nothing
// else is written.
func TestInstallClaudeRefusesSymlink(t *testing.T) {
	repo := clRepo(t)
	target := filepath.Join(t.TempDir(), "settings.json")
	const content = "{\n  \"model\": \"opus\"\n}\n"
	if err := os.WriteFile(target, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	wtDir(t, repo, ".claude")
	link := filepath.Join(repo, ".claude", "settings.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, uninstall := range []bool{false, true} {
		_, err := Install(repo, uninstall, false)
		var ue *sessions.UnsafePathError
		if !errors.Is(err, sessions.ErrUnsafePath) || !errors.As(err, &ue) || ue.Path != link {
			t.Fatalf("installClaude(uninstall=%v) through a linked settings.json = %v, want exit 2 naming %s", uninstall, err, link)
		}
		if got := clRead(t, target); got != content {
			t.Errorf("the link's target changed: %q", got)
		}
		if _, err := os.Lstat(filepath.Join(repo, ".claude", "skills")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("skills were installed beside the refused link: %v", err)
		}
	}
}

// A skill as an earlier pickup installed it is upgraded; an edited one is
// kept (TestInstallClaudeKeepsEditedSkills).
func TestInstallClaudeUpgradesPriorSkills(t *testing.T) {
	repo := clRepo(t)
	prior, err := os.ReadFile("testdata/prior-pickup-SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	wtFile(t, repo, ".claude/skills/pickup/SKILL.md", string(prior))
	var action string
	for _, ch := range clInstall(t, repo, false) {
		if filepath.Base(filepath.Dir(ch.Path)) == "pickup" {
			action = ch.Action
		}
	}
	want := ProjectFiles()[1]
	if got := clRead(t, filepath.Join(repo, want.Path)); action != "updated" || got != string(want.Data) {
		t.Errorf("the prior skill was %s, not upgraded", action)
	}
}

func TestPluginEnabled(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		settings string
		want     bool
	}{
		{`{"enabledPlugins": {"pickup@pickup": true}}`, true},
		{`{"enabledPlugins": {"pickup@team-marketplace": true, "other@x": false}}`, true},
		{`{"enabledPlugins": {"pickup@pickup": false}}`, false},
		{`{"enabledPlugins": {"pickupx@pickup": true}}`, false},
		{`{}`, false},
		{`not json`, false},
	} {
		wtFile(t, dir, "settings.json", tc.settings)
		if got := PluginEnabled(dir); got != tc.want {
			t.Errorf("PluginEnabled(%s) = %v, want %v", tc.settings, got, tc.want)
		}
	}
	if PluginEnabled(filepath.Join(dir, "missing")) {
		t.Error("PluginEnabled without settings")
	}
}
