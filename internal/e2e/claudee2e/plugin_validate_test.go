package claudee2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// claudeCommand runs a claude subcommand that needs no model (plugin
// validate, plugin marketplace ...) with a private HOME and no traffic
// beyond what the command itself does.
func claudeCommand(t *testing.T, home string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(claudeBinary(t), args...)
	for _, kv := range os.Environ() {
		if !isCleared(kv) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+home,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Logf("%s: %v\nstderr: %s", strings.Join(cmd.Args, " "), err, ee.Stderr)
	}
	return out, err
}

// validation is what `claude plugin validate --json` reports.
type validation struct {
	Success  bool `json:"success"`
	Manifest struct {
		Errors   []json.RawMessage `json:"errors"`
		Warnings []json.RawMessage `json:"warnings"`
	} `json:"manifest"`
	Directory *struct {
		Findings   []json.RawMessage `json:"findings"`
		Undecided  []json.RawMessage `json:"undecided"`
		Incomplete bool              `json:"incomplete"`
	} `json:"directory"`
}

// `claude plugin validate` passes pickup's plugin and its marketplace with
// no warning, also the plugin directory's (the catalog plugins are submitted
// to: it asks for a license and an icon), with --strict, which fails on any.
func TestPluginValidates(t *testing.T) {
	t.Parallel()
	plugin := pluginDir(t)
	root := filepath.Dir(filepath.Dir(filepath.Dir(plugin))) // internal/claude/plugin
	for _, c := range []struct {
		name string
		args []string
	}{
		{"plugin", []string{"plugin", "validate", "--json", "--strict", "--profile", "directory", plugin}},
		{"marketplace", []string{"plugin", "validate", "--json", "--strict", root}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := claudeCommand(t, t.TempDir(), c.args...)
			var v validation
			if jerr := json.Unmarshal(out, &v); jerr != nil {
				t.Fatalf("claude %s: %v (%v)\n%s", strings.Join(c.args, " "), err, jerr, out)
			}
			if err != nil || !v.Success || len(v.Manifest.Errors) > 0 || len(v.Manifest.Warnings) > 0 {
				t.Errorf("claude %s: %v\n%s", strings.Join(c.args, " "), err, out)
			}
			if d := v.Directory; d != nil && (len(d.Findings) > 0 || len(d.Undecided) > 0 || d.Incomplete) {
				t.Errorf("the plugin directory's checks reported something:\n%s", out)
			}
		})
	}
}

// The plugin installs from a local clone, the way README gives it:
// claude plugin marketplace add <clone>, then claude plugin install
// pickup@pickup.
func TestPluginMarketplaceAddLocalPath(t *testing.T) {
	t.Parallel()
	plugin := pluginDir(t)
	root := filepath.Dir(filepath.Dir(filepath.Dir(plugin)))
	home := t.TempDir()
	for _, args := range [][]string{
		{"plugin", "marketplace", "add", root},
		{"plugin", "install", "pickup@pickup"},
	} {
		if out, err := claudeCommand(t, home, args...); err != nil {
			t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	out, err := claudeCommand(t, home, "plugin", "list", "--json")
	if err != nil {
		t.Fatalf("claude plugin list --json: %v\n%s", err, out)
	}
	var installed []struct {
		ID             string `json:"id"`
		Enabled        bool   `json:"enabled"`
		ReadFromFolder string `json:"readFromFolder"`
	}
	if err := json.Unmarshal(out, &installed); err != nil {
		t.Fatalf("claude plugin list --json: %v\n%s", err, out)
	}
	if len(installed) != 1 || installed[0].ID != "pickup@pickup" || !installed[0].Enabled || installed[0].ReadFromFolder != plugin {
		t.Errorf("after marketplace add %s and install pickup@pickup, claude plugin list --json says\n%s\nwant pickup@pickup enabled, read from %s", root, out, plugin)
	}
}
