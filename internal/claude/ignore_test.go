package claude

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := clRepo(t)
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return repo
}

func gitIgnores(t *testing.T, repo, path string) bool {
	t.Helper()
	return exec.Command("git", "-C", repo, "check-ignore", "-q", path).Run() == nil
}

// init --claude makes git ignore .claude/settings.local.json in the clone
// (.git/info/exclude, keeping what was there), once; uninstall takes out
// exactly that; a repository whose .gitignore already ignores it is left
// alone.
func TestInstallClaudeIgnoresLocalSettings(t *testing.T) {
	repo := gitRepo(t)
	exclude := filepath.Join(repo, ".git", "info", "exclude")
	before, err := os.ReadFile(exclude)
	if err != nil {
		t.Fatal(err)
	}
	if gitIgnores(t, repo, SettingsFile) {
		t.Fatalf("git ignores %s before init --claude: the test proves nothing", SettingsFile)
	}
	changes := clInstall(t, repo, false)
	if !gitIgnores(t, repo, SettingsFile) {
		t.Fatalf("after init --claude git does not ignore %s; changes %+v", SettingsFile, changes)
	}
	var said bool
	for _, ch := range changes {
		said = said || (ch.Path == exclude && ch.Action == "updated" && strings.Contains(ch.Detail, SettingsFile))
	}
	if !said {
		t.Errorf("init --claude did not say it changed %s: %+v", exclude, changes)
	}
	out, err := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=all").Output()
	if err != nil || strings.Contains(string(out), "settings.local.json") {
		t.Errorf("git status lists the local settings: %q, %v", out, err)
	}
	clInstall(t, repo, false)
	after, _ := os.ReadFile(exclude)
	if strings.Count(string(after), SettingsFile) != 1 || !strings.HasPrefix(string(after), string(before)) {
		t.Errorf("a second init --claude changed the exclude file:\n%s", after)
	}
	clInstall(t, repo, true)
	if got, _ := os.ReadFile(exclude); string(got) != string(before) {
		t.Errorf("uninstall left the exclude file\n%s\nwant\n%s", got, before)
	}

	// Already ignored by the repository's own rules: nothing added.
	repo = gitRepo(t)
	wtFile(t, repo, ".gitignore", ".claude/settings.local.json\n")
	exclude = filepath.Join(repo, ".git", "info", "exclude")
	before, _ = os.ReadFile(exclude)
	clInstall(t, repo, false)
	if got, _ := os.ReadFile(exclude); string(got) != string(before) {
		t.Errorf("with .gitignore ignoring it, init --claude still changed the exclude file:\n%s", got)
	}
}
