package agentse2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbin"
)

// project is a git repository set up for one agent with `pickup init
// --codex` or `--gemini`, and a home folder of its own for the agent's
// configuration.
type project struct {
	t    *testing.T
	kind string // codex or gemini
	exe  string // the agent's CLI
	root string // the repository
	home string
	env  []string
	// noRelaunch starts Gemini CLI without the second node process it
	// relaunches itself into (for a larger heap): half its start-up,
	// on a busy machine a minute; the tests of processes and leases
	// (kill, two at once) start it as users do.
	noRelaunch bool
}

func newProject(t *testing.T, kind string) *project {
	t.Helper()
	exe := agentBinary(t, kind)
	pickup := pickupBinary(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := &project{t: t, kind: kind, exe: exe, root: filepath.Join(dir, "repo"), home: filepath.Join(dir, "home")}
	for _, d := range []string{p.root, p.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The environment a user's shell has: none of an agent's or of
	// pickup's variables from the process running the tests.
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "CLAUDE") || strings.HasPrefix(name, "CODEX") || strings.HasPrefix(name, "GEMINI") ||
			strings.HasPrefix(name, "GOOGLE") || strings.HasPrefix(name, "OPENAI") || strings.HasPrefix(name, "PICKUP_") ||
			name == "HOME" || name == "PATH" || name == "XDG_CONFIG_HOME" || name == "XDG_CACHE_HOME" {
			continue
		}
		p.env = append(p.env, kv)
	}
	p.env = append(p.env, "HOME="+p.home, "PATH="+filepath.Dir(pickup)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com", "GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com")
	p.run("git", "init", "-q")
	p.pickup("init", "--"+kind)
	if kind == "gemini" {
		// An API key as its own account would have it (the stand-in
		// takes any), and no usage statistics, telemetry or update
		// checks: with no network, each waits out its own timeout
		// (minutes) before the CLI exits.
		p.write(filepath.Join(p.home, ".gemini", "settings.json"), `{"security":{"auth":{"selectedType":"gemini-api-key"}},`+
			`"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}`)
	}
	t.Cleanup(func() { testbin.WaitDetached(dir) })
	return p
}

func (p *project) write(path, data string) {
	p.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		p.t.Fatal(err)
	}
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

// pickup runs pickup in the repository as a user would, and fails the test
// if it fails.
func (p *project) pickup(args ...string) string {
	p.t.Helper()
	return p.run(pickupBinary(p.t), args...)
}

// pickupCode runs pickup and returns its output and exit code.
func (p *project) pickupCode(args ...string) (string, int) {
	p.t.Helper()
	cmd := exec.Command(pickupBinary(p.t), args...)
	cmd.Dir, cmd.Env = p.root, p.env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("pickup %s: %v", strings.Join(args, " "), err)
	}
	return string(out), 0
}

// newSession writes a session to todo/ and returns its id.
func (p *project) newSession(title string) string {
	p.t.Helper()
	out := p.pickup("new", "--title", title, "--json", "-")
	m := regexp.MustCompile(`"id":\s*"([^"]+)"`).FindStringSubmatch(out)
	if m == nil {
		p.t.Fatalf("pickup new printed no id: %s", out)
	}
	return m[1]
}

// board is the repository's board.
func (p *project) board() string { return filepath.Join(p.root, ".spx", "sessions") }

// agent is one running Codex CLI or Gemini CLI, started by the test.
type agent struct {
	t      *testing.T
	name   string
	api    *standIn
	cmd    *exec.Cmd
	mu     sync.Mutex
	out    bytes.Buffer
	exited chan struct{}
	err    error
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// start starts the agent non-interactively on prompt, its model the
// stand-in api, in the repository, as a user runs it in a folder and with
// hooks they trust, with approvals and the sandbox off (pickup help agents
// says why the sandbox is off).
func (p *project) start(name string, api *standIn, prompt string) *agent {
	p.t.Helper()
	env := append([]string(nil), p.env...)
	var args []string
	switch p.kind {
	case "codex":
		codexHome := filepath.Join(p.home, "codex-"+name)
		p.write(filepath.Join(codexHome, "config.toml"), fmt.Sprintf(`model = "stand-in"
model_provider = "standin"
allow_login_shell = false
check_for_update_on_startup = false

[model_providers.standin]
name = "stand-in"
base_url = "%s/v1"
wire_api = "responses"

[projects.%q]
trust_level = "trusted"

[features]
hooks = true
`, api.URL(), p.root))
		env = append(env, "CODEX_HOME="+codexHome)
		args = []string{"exec", "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", "--color", "never", prompt}
	case "gemini":
		env = append(env, "GEMINI_API_KEY=e2e-not-a-real-key", "GOOGLE_GEMINI_BASE_URL="+api.URL(), "GEMINI_CLI_TRUST_WORKSPACE=true")
		if p.noRelaunch {
			env = append(env, "GEMINI_CLI_NO_RELAUNCH=true")
		}
		args = []string{"-p", prompt, "--yolo"}
	}
	cmd := exec.Command(p.exe, args...)
	cmd.Dir, cmd.Env = p.root, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	a := &agent{t: p.t, name: name, api: api, cmd: cmd, exited: make(chan struct{})}
	cmd.Stdout = lockedWriter{&a.mu, &a.out}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start %s: %v", p.exe, err)
	}
	go func() {
		a.err = cmd.Wait()
		close(a.exited)
	}()
	p.t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-a.exited
		if p.t.Failed() {
			p.t.Logf("%s %q printed:\n%s", p.kind, name, a.output())
		}
	})
	return a
}

func (a *agent) output() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.out.String()
}

// stall is how long an agent may go without a request to its stand-in
// or a byte of output before the test calls it hung: a bound on a hang,
// counted from the last progress, with room for a slow machine.
const stall = 4 * time.Minute

// until waits for done (or the agent's exit, with exitOK) and fails the
// test when the agent makes no progress for stall.
func (a *agent) until(what string, done <-chan struct{}) {
	a.t.Helper()
	last, seen := time.Now(), -1
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if n := a.api.progress() + len(a.output()); n != seen {
				seen, last = n, time.Now()
			} else if time.Since(last) > stall {
				a.t.Fatalf("%s %s: no progress for %v while waiting for %s", a.api.kind, a.name, stall, what)
			}
		}
	}
}

// wait waits for the agent to exit and fails the test if it failed.
func (a *agent) wait() {
	a.t.Helper()
	a.until("its exit", a.exited)
	if a.err != nil {
		a.t.Fatalf("%s %s: %v", a.api.kind, a.name, a.err)
	}
}

// owner is the owner pickup's SessionStart hook told the agent it is, from
// what the agent sent its model ("this Codex CLI session is owner X").
func (a *agent) owner() string {
	a.t.Helper()
	re := regexp.MustCompile(`session is owner (\S+) on the board`)
	for _, b := range a.api.Bodies() {
		if m := re.FindStringSubmatch(b); m != nil {
			return m[1]
		}
	}
	a.t.Fatalf("%s %s: no request carried the SessionStart hook's context", a.api.kind, a.name)
	return ""
}
