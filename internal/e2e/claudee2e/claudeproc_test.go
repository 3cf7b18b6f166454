package claudee2e

import (
	"bufio"
	"bytes"
	"encoding/json"
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
	if dir := os.Getenv("PICKUP_E2E_DEBUG"); dir != "" {
		// Claude Code's own log: which hooks ran, how long, which were
		// cancelled.
		args = append(args, "--debug-file", filepath.Join(dir, strings.ReplaceAll(p.t.Name(), "/", "_")+"-"+name+".log"))
	}
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
