package claudee2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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
			test(t, newProject(t, how))
		})
	}
}

// pluginDir is pickup's Claude Code plugin, found the way `/plugin
// marketplace add` finds it: through the marketplace file at the top of
// the repository.
func pluginDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
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
	for _, d := range []string{p.root, p.home} {
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
		"PICKUP_NO_SYNC=1",
	)
	p.run("git", "init", "-q")
	switch how {
	case projectFiles:
		p.pickupOK("", "init", "--claude")
	case plugin:
		p.claudeArgs = []string{"--plugin-dir", pluginDir(t)}
		p.pickupOK("", "init")
	}
	return p
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

// A claude is one running Claude Code CLI in print mode, reading user
// messages as stream-json on stdin and writing its messages as stream-json
// on stdout.
type claude struct {
	t    *testing.T
	name string
	api  *stubAPI
	cmd  *exec.Cmd
	in   io.WriteCloser

	mu      sync.Mutex
	id      string           // the session id, from the CLI's init message
	msgs    []map[string]any // everything it printed
	results chan map[string]any
	exited  chan struct{}
	err     error // from Wait, once exited is closed
	stderr  bytes.Buffer
}

// claudeOpts are the ways a test starts Claude Code.
type claudeOpts struct {
	dir  string   // working directory; the repository when empty
	args []string // more arguments: --resume ID, --fork-session, --permission-mode ...
}

// startClaude starts `claude -p --input-format stream-json` in the
// project, talking to api.
func (p *project) startClaude(name string, api *stubAPI, o claudeOpts) *claude {
	p.t.Helper()
	exe := claudeBinary(p.t)
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--include-hook-events"}
	args = append(args, p.claudeArgs...)
	args = append(args, o.args...)
	cmd := exec.Command(exe, args...)
	cmd.Dir = p.root
	if o.dir != "" {
		cmd.Dir = o.dir
	}
	cmd.Env = append(append([]string(nil), p.env...),
		"CLAUDE_CONFIG_DIR="+filepath.Join(p.home, ".claude"),
		"ANTHROPIC_BASE_URL="+api.URL(),
		"ANTHROPIC_API_KEY=sk-ant-e2e-not-a-real-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	)
	// Its own process group, so that the test's cleanup also ends what it
	// started (hooks, sandboxed commands).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c := &claude{t: p.t, name: name, api: api, cmd: cmd, results: make(chan map[string]any, 16), exited: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	c.in, err = cmd.StdinPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	cmd.Stderr = &lockedWriter{mu: &c.mu, w: &c.stderr}
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start %s: %v", exe, err)
	}
	go c.read(stdout)
	p.t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-c.exited
		if p.t.Failed() {
			c.mu.Lock()
			defer c.mu.Unlock()
			var lines []string
			for _, m := range c.msgs {
				b, _ := json.Marshal(m)
				lines = append(lines, clip(string(b), 600))
			}
			p.t.Logf("claude %q (session %s) printed:\n  %s\nstderr:\n%s", name, c.id, strings.Join(lines, "\n  "), c.stderr.String())
		}
	})
	return c
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (c *claude) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			m = map[string]any{"type": "unparsed", "line": sc.Text()}
		}
		c.mu.Lock()
		c.msgs = append(c.msgs, m)
		if id, _ := m["session_id"].(string); id != "" && c.id == "" {
			c.id = id
		}
		c.mu.Unlock()
		if m["type"] == "result" {
			c.results <- m
		}
	}
	c.err = c.cmd.Wait()
	close(c.exited)
}

// turnTimeout bounds one prompt's turn: the stand-in answers at once, so a
// turn takes a few seconds even on a loaded machine.
const turnTimeout = 90 * time.Second

// prompt sends one user message and waits for the turn's result.
func (c *claude) prompt(text string) map[string]any {
	c.t.Helper()
	msg, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
	if _, err := c.in.Write(append(msg, '\n')); err != nil {
		c.t.Fatalf("claude %s: write prompt: %v", c.name, err)
	}
	select {
	case r := <-c.results:
		return r
	case <-c.exited:
		c.t.Fatalf("claude %s exited during the turn %q: %v", c.name, text, c.err)
	case <-time.After(turnTimeout):
		c.t.Fatalf("claude %s: no result for %q after %v", c.name, text, turnTimeout)
	}
	return nil
}

// ID returns the Claude Code session id.
func (c *claude) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id == "" {
		c.t.Fatalf("claude %s printed no session id", c.name)
	}
	return c.id
}

func (c *claude) Pid() int { return c.cmd.Process.Pid }

// end closes its input, as a user leaving a print-mode session, and waits
// for it to exit.
func (c *claude) end() {
	c.t.Helper()
	_ = c.in.Close()
	c.wait("its input was closed")
}

func (c *claude) signal(sig syscall.Signal) {
	c.t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		c.t.Fatalf("claude %s: %v: %v", c.name, sig, err)
	}
}

func (c *claude) wait(why string) {
	c.t.Helper()
	select {
	case <-c.exited:
	case <-time.After(turnTimeout):
		c.t.Fatalf("claude %s did not exit within %v after %s", c.name, turnTimeout, why)
	}
}

// withTimeout is a context for one test's work.
func withTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
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
