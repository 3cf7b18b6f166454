package claudee2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cleared are the variables of the test's own environment that would change
// what pickup or Claude Code do: a child gets only what the test sets.
var cleared = []string{"PICKUP_", "CLAUDE", "ANTHROPIC_", "HOME=", "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=",
	"XDG_DATA_HOME=", "XDG_STATE_HOME=", "DISABLE_", "CODEX_THREAD_ID="}

// A project is a git repository with a pickup board, set up for Claude
// Code the way a user does it, and the private home where Claude Code keeps
// its configuration and transcripts for this test.
type project struct {
	t     *testing.T
	root  string // the repository
	board string // <root>/.spx/sessions
	home  string
	env   []string // for pickup and claude: pickup first in PATH
	// claudeArgs are added to every claude command line (--plugin-dir).
	claudeArgs []string
	// pickupSkill is how the user calls the /pickup skill: a plugin's
	// skills are named after the plugin.
	pickupSkill string
}

// setup says how pickup's Claude Code integration is installed.
type setup int

const (
	projectFiles setup = iota // pickup init --claude: .claude/ in the repository
	plugin                    // pickup init, and claude --plugin-dir with pickup's plugin
)

func (s setup) String() string {
	if s == plugin {
		return "plugin"
	}
	return "init-claude"
}

// forEachSetup runs test in parallel for each way of installing pickup's
// Claude Code integration, each in a new project.
func forEachSetup(t *testing.T, test func(t *testing.T, p *project)) {
	t.Parallel()
	for _, how := range []setup{projectFiles, plugin} {
		t.Run(how.String(), func(t *testing.T) {
			t.Parallel()
			claudeBinary(t) // fail or skip before building anything
			test(t, newProject(t, how))
		})
	}
}

// pluginDir is pickup's Claude Code plugin, found the way `/plugin
// marketplace add` finds it: through the marketplace file at the top of
// the repository.
func pluginDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, ".claude-plugin", "marketplace.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("pickup's plugin marketplace: %v", err)
	}
	var market struct {
		Plugins []struct {
			Name   string
			Source json.RawMessage
		}
	}
	if err := json.Unmarshal(data, &market); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, pl := range market.Plugins {
		var source string
		if pl.Name != "pickup" || json.Unmarshal(pl.Source, &source) != nil {
			continue
		}
		dir := filepath.Join(root, source)
		if _, err := os.Stat(filepath.Join(dir, ".claude-plugin", "plugin.json")); err != nil {
			t.Fatalf("%s names the plugin pickup at %s: %v", file, source, err)
		}
		return dir
	}
	t.Fatalf("%s lists no plugin named pickup with a relative source: %s", file, data)
	return ""
}

func newProject(t *testing.T, how setup) *project {
	t.Helper()
	exe := pickupBinary(t)
	dir := t.TempDir()
	p := &project{t: t, root: filepath.Join(dir, "repo"), home: filepath.Join(dir, "home")}
	p.board = filepath.Join(p.root, ".spx", "sessions")
	tmp := filepath.Join(dir, "tmp")
	for _, d := range []string{p.root, p.home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range os.Environ() {
		if isCleared(kv) || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		p.env = append(p.env, kv)
	}
	p.env = append(p.env,
		"PATH="+filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+p.home,
		// A temp folder of its own: Claude Code's Bash sandbox keeps its
		// settings in $TMPDIR/claude-<uid>/ under a name made from their
		// content, so two projects with the same settings at once (the
		// setups run in parallel) shared one file, and the first to exit
		// removed it under the other ("bwrap: Can't find source path").
		"TMPDIR="+tmp,
		"PICKUP_NO_SYNC=1",
	)
	p.run("git", "init", "-q")
	switch how {
	case projectFiles:
		p.pickupSkill = "/pickup"
		p.pickupOK("", "init", "--claude")
	case plugin:
		p.pickupSkill = "/pickup:pickup"
		p.claudeArgs = []string{"--plugin-dir", pluginDir(t)}
		p.pickupOK("", "init")
	}
	return p
}

// in returns the project for subtest t: failures and cleanups go to t.
func (p *project) in(t *testing.T) *project {
	q := *p
	q.t = t
	return &q
}

func isCleared(kv string) bool {
	for _, c := range cleared {
		if strings.HasPrefix(kv, c) {
			return true
		}
	}
	return false
}

func (p *project) run(name string, args ...string) string {
	p.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = p.root, p.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// pickup runs pickup in the repository as owner (none when empty) and
// returns its stdout, stderr and exit code.
func (p *project) pickup(owner string, args ...string) (string, string, int) {
	p.t.Helper()
	return p.pickupEnv(nil, owner, args...)
}

// pickupEnv is pickup with more environment variables.
func (p *project) pickupEnv(env []string, owner string, args ...string) (string, string, int) {
	p.t.Helper()
	if owner != "" {
		args = append([]string{"--owner", owner}, args...)
	}
	cmd := exec.Command(pickupBinary(p.t), args...)
	cmd.Dir, cmd.Env = p.root, append(append([]string(nil), p.env...), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	case err != nil:
		p.t.Fatalf("pickup %s: %v", strings.Join(args, " "), err)
	}
	return stdout.String(), stderr.String(), 0
}

func (p *project) pickupOK(owner string, args ...string) string {
	p.t.Helper()
	out, errOut, code := p.pickup(owner, args...)
	if code != 0 {
		p.t.Fatalf("pickup %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// seed creates sessions with these titles, in decreasing priority, and
// returns their ids: the first is the one `next` takes first.
func (p *project) seed(titles ...string) []string {
	p.t.Helper()
	prios := []string{"high", "medium", "low"}
	var ids []string
	for i, title := range titles {
		prio := prios[min(i, len(prios)-1)]
		ids = append(ids, strings.TrimSpace(p.pickupOK("", "new", "--priority", prio, "--title", title)))
	}
	return ids
}

// where returns the state of session id and its owner: "todo", "doing",
// "done" or "failed", from where its file is.
func (p *project) where(id string) (state, owner string) {
	p.t.Helper()
	var got struct{ State, Owner string }
	out := p.pickupOK("", "show", "--json", id)
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		p.t.Fatalf("pickup show --json %s: %v\n%s", id, err, out)
	}
	return got.State, got.Owner
}

// requireHeld fails unless owner holds session id.
func (p *project) requireHeld(id, owner, why string) {
	p.t.Helper()
	if state, got := p.where(id); state != "doing" || got != owner {
		p.t.Fatalf("%s: session %s is %s by %q, want doing by %q\n%s", why, id, state, got, owner, p.boardTree())
	}
}

func (p *project) requireState(id, want, why string) {
	p.t.Helper()
	if state, owner := p.where(id); state != want {
		p.t.Fatalf("%s: session %s is %s (owner %q), want %s\n%s", why, id, state, owner, want, p.boardTree())
	}
}

// boardTree lists the board's state files (todo/, doing/, done/, failed/)
// with their contents: a snapshot to compare, and to print on failure.
func (p *project) boardTree() string {
	p.t.Helper()
	var b strings.Builder
	for _, state := range []string{"todo", "doing", "done", "failed"} {
		_ = filepath.WalkDir(filepath.Join(p.board, state), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(p.board, path)
			data, _ := os.ReadFile(path)
			fmt.Fprintf(&b, "== %s (%d bytes, sha %x)\n", rel, len(data), sum(data))
			return nil
		})
	}
	return b.String()
}

func sum(data []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range data {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

// events returns the board's history.
func (p *project) events() string {
	data, _ := os.ReadFile(filepath.Join(p.board, "events.log"))
	return string(data)
}

// ownerStatus is what `pickup status --json` says of one owner; State is
// empty when it has no lease and holds nothing.
type ownerStatus struct {
	Owner   string
	State   string
	Reason  string
	Holders []struct{ PID int }
}

func (p *project) status(owner string) ownerStatus {
	p.t.Helper()
	out := p.pickupOK("", "status", "--json")
	var all []ownerStatus
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		p.t.Fatalf("pickup status --json: %v\n%s", err, out)
	}
	for _, s := range all {
		if s.Owner == owner {
			return s
		}
	}
	return ownerStatus{Owner: owner}
}

// requireLeaseOn fails unless owner's lease is alive and lists pid.
func (p *project) requireLeaseOn(owner string, pid int, why string) {
	p.t.Helper()
	s := p.status(owner)
	for _, h := range s.Holders {
		if h.PID == pid && s.State == "alive" {
			return
		}
	}
	p.t.Fatalf("%s: owner %s is %q (%s) with processes %v, want alive with the Claude Code process %d", why, owner, s.State, s.Reason, s.Holders, pid)
}
