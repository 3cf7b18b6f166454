package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/claude"
	"github.com/pickup-dev/pickup/internal/templates"
	ucli "github.com/urfave/cli/v2"
)

// The wiring of the Claude Code integration; internal/claude tests the
// hooks and the installer themselves.

func clRepo(t *testing.T) string {
	t.Helper()
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

func clInstallRun(repo string) (*run, *bytes.Buffer) {
	var out bytes.Buffer
	return &run{noSync: true, env: &Env{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out,
		Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return repo, nil },
		Hostname: os.Hostname, Now: time.Now,
	}}, &out
}

// The hook command exits 0 whatever happens: errors go to stderr.
func TestHookCommandNeverFails(t *testing.T) {
	repo := clRepo(t)
	for _, tc := range []struct{ args, stdin, want string }{
		{"post-tool-use", "not json", "not a JSON object"},
		{"session-start", `{"cwd":"/"}`, "no session_id"},
		{"session-end", `{"session_id":"../../etc"}`, "invalid"},
		{"frobnicate", `{}`, "unknown hook event"},
		{"", `{}`, "unknown hook event"},
	} {
		r, out := clInstallRun(repo)
		r.env.Stdin = strings.NewReader(tc.stdin)
		app := &ucli.App{Name: "pickup", Commands: []*ucli.Command{r.hookCommand()}, Writer: out, ErrWriter: out}
		args := []string{"pickup", "hook"}
		if tc.args != "" {
			args = append(args, tc.args)
		}
		if err := app.Run(args); err != nil {
			t.Errorf("hook %s returned %v; want nil (exit 0)", tc.args, err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("hook %s: stderr %q, want %q", tc.args, out.String(), tc.want)
		}
	}
}

func TestInitIntegrationFlags(t *testing.T) {
	repo := clRepo(t)
	wtDir(t, repo, ".git")
	runInit := func(args ...string) (string, error) {
		r, out := clInstallRun(repo)
		app := &ucli.App{Name: "pickup", Writer: out, ErrWriter: out, Flags: r.globalFlags(), Before: r.resolve,
			Commands: []*ucli.Command{{Name: "init", Flags: append(initClaudeFlags(), r.globalFlags()...), Before: r.resolve, Action: r.initIntegration}}}
		err := app.Run(append([]string{"pickup", "init"}, args...))
		return out.String(), err
	}
	out, err := runInit("--agents")
	if err != nil || out != templates.Agents() {
		t.Errorf("--agents printed %q, %v; want the snippet alone", out, err)
	}
	for _, args := range [][]string{{"--uninstall"}, {"--agents", "--claude"}} {
		if _, err := runInit(args...); ExitCode(err) != ExitUsage {
			t.Errorf("init %v: %v, want a usage error", args, err)
		}
	}
	out, err = runInit("--claude")
	if err != nil || !strings.Contains(out, "board ready at "+filepath.Join(repo, DefaultBoardDir)) ||
		!strings.Contains(out, "created   "+filepath.Join(repo, ".claude", "settings.local.json")) {
		t.Errorf("init --claude: %v\n%s", err, out)
	}
	out, err = runInit("--claude")
	if err != nil || !strings.Contains(out, "up to date") {
		t.Errorf("second init --claude: %v\n%s", err, out)
	}
	out, err = runInit("--claude", "--json")
	var obj struct {
		Dir     string          `json:"dir"`
		Changes []claude.Change `json:"changes"`
	}
	if err != nil || json.Unmarshal([]byte(out), &obj) != nil || obj.Dir == "" || len(obj.Changes) != 4 { // two skills, the settings, the ignore rule
		t.Errorf("init --claude --json: %v\n%s", err, out)
	}
	out, err = runInit("--claude", "--uninstall")
	if err != nil || !strings.Contains(out, "removed") {
		t.Errorf("init --claude --uninstall: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(repo, ".claude")); err == nil {
		t.Error(".claude survived uninstall")
	}
	if _, err := os.Stat(filepath.Join(repo, DefaultBoardDir, "todo")); err != nil {
		t.Error("uninstall removed the board")
	}
}
