package sharedways

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbin"
)

// tmpRoot holds what outlives one test: the pickup binary.
var tmpRoot string

func TestMain(m *testing.M) { os.Exit(testbin.Main(m, "sharedways-", &tmpRoot)) }

var build testbin.Once

// pickupBinary builds the real pickup once, without -race: these tests
// start it hundreds of times.
func pickupBinary(t testing.TB) string {
	t.Helper()
	if exe := os.Getenv("SHAREDWAYS_PICKUP"); exe != "" {
		return exe // another build, to measure it (world_*_test.go)
	}
	return build.Path(t, tmpRoot)
}

// baseEnv is the environment of every child: no user's git or pickup
// settings leak in.
func baseEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PICKUP_") || strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "CLAUDE") || k == "HOME" || k == "CODEX_THREAD_ID" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "PICKUP_NO_SYNC=1", "PICKUP_SHARED_STATS="+os.Getenv("SHAREDWAYS_STATS"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
}

// remote is a bare repository and the URL the clones use.
type remote struct {
	t      testing.TB
	bare   string
	url    string
	home   string
	daemon *daemon // nil for file://
}

// daemon is a `git daemon` serving a directory on 127.0.0.1.
type daemon struct {
	t    testing.TB
	base string
	port int
	cmd  *exec.Cmd
}

// freePort asks the kernel for a port that is free now.
func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startDaemon(t testing.TB, base string, port int) *daemon {
	d := &daemon{t: t, base: base, port: port}
	d.start()
	t.Cleanup(d.stop)
	return d
}

// start runs git daemon and waits until it accepts connections.
func (d *daemon) start() {
	exe := "/usr/lib/git-core/git-daemon"
	if _, err := os.Stat(exe); err != nil {
		exe = "git-daemon"
	}
	d.cmd = exec.Command(exe, "--reuseaddr", "--listen=127.0.0.1", fmt.Sprintf("--port=%d", d.port),
		"--base-path="+d.base, "--export-all", "--enable=receive-pack", d.base)
	d.cmd.Env = baseEnv(d.base)
	if err := d.cmd.Start(); err != nil {
		d.t.Fatalf("git daemon: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", d.port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("git daemon did not listen on %d: %v", d.port, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop kills the daemon and waits until the port refuses connections.
func (d *daemon) stop() {
	if d.cmd == nil || d.cmd.Process == nil {
		return
	}
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	d.cmd = nil
}

// newRemote makes a bare repository served over kind: "daemon" (git://
// on loopback) or "file" (file://).
func newRemote(t testing.TB, kind string) *remote {
	t.Helper()
	root := t.TempDir()
	r := &remote{t: t, bare: filepath.Join(root, "srv", "board.git"), home: filepath.Join(root, "home")}
	// Runs before root is removed: the heartbeat pushes that claims and
	// hooks start detached (pickup shared-beat) may still be at work there.
	t.Cleanup(func() { testbin.WaitDetached(root) })
	if err := os.MkdirAll(r.home, 0o755); err != nil {
		t.Fatal(err)
	}
	r.git(root, "init", "-q", "--bare", r.bare)
	switch kind {
	case "daemon":
		r.daemon = startDaemon(t, filepath.Join(root, "srv"), freePort(t))
		r.url = fmt.Sprintf("git://127.0.0.1:%d/board.git", r.daemon.port)
	default:
		r.url = "file://" + r.bare
	}
	return r
}

// git runs git in dir.
func (r *remote) git(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = baseEnv(r.home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// clone is one clone of the repository, with its own board.
type clone struct {
	r    *remote
	name string
	dir  string
	// runtime is the clone's $XDG_RUNTIME_DIR, where the clones of a
	// machine register (internal/arbiter/gitremote/clones.go): one of its own, so
	// that each clone stands for a machine of its own and judges the
	// owners of the others by their heartbeats, as these tests were
	// written to check. A test of clones on one machine gives them one.
	runtime string
}

// env is the environment of pickup in c.
func (c *clone) env(extra ...string) []string {
	return append(append(baseEnv(c.r.home), "XDG_RUNTIME_DIR="+c.runtime), extra...)
}

// clones makes n clones; the first runs init --shared first (creating
// the board branch), the others then join it.
func (r *remote) clones(n int) []*clone {
	r.t.Helper()
	root := filepath.Dir(r.home)
	var out []*clone
	for i := range n {
		c := &clone{r: r, name: fmt.Sprintf("c%d", i), dir: filepath.Join(root, fmt.Sprintf("c%d", i)), runtime: filepath.Join(root, fmt.Sprintf("run-c%d", i))}
		r.git(root, "clone", "-q", r.url, c.dir)
		if res := c.pickup(context.Background(), "", "init", "--shared"); res.code != 0 {
			r.t.Fatalf("init --shared in %s: exit %d\n%s", c.name, res.code, res.stderr)
		}
		out = append(out, c)
	}
	return out
}

// board is the clone's board directory.
func (c *clone) board() string { return filepath.Join(c.dir, ".spx", "sessions") }

// result is one pickup process's outcome.
type result struct {
	code           int
	stdout, stderr string
}

// pickup runs pickup in the clone as owner ("" for none given).
func (c *clone) pickup(ctx context.Context, owner string, args ...string) result {
	return c.pickupEnv(ctx, owner, nil, args...)
}

func (c *clone) pickupEnv(ctx context.Context, owner string, env []string, args ...string) result {
	if owner != "" {
		args = append([]string{"--owner", owner}, args...)
	}
	cmd := exec.CommandContext(ctx, pickupBinary(c.r.t), args...)
	cmd.Dir = c.dir
	cmd.Env = c.env(env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		res.code = -1
		res.stderr += err.Error()
	}
	return res
}

// must runs pickup and fails the test unless it exits 0.
func (c *clone) must(owner string, args ...string) string {
	c.r.t.Helper()
	res := c.pickup(context.Background(), owner, args...)
	if res.code != 0 {
		c.r.t.Fatalf("%s: pickup %s: exit %d\n%s", c.name, strings.Join(args, " "), res.code, res.stderr)
	}
	return res.stdout
}

// newSessions creates n sessions in the clone and returns their ids.
func (c *clone) newSessions(n int) []string {
	c.r.t.Helper()
	var ids []string
	for i := range n {
		out := c.must("", "new", "--title", fmt.Sprintf("%s task %d", c.name, i), "-")
		ids = append(ids, firstField(out))
	}
	return ids
}

func firstField(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// branchEvents reads the board branch's events.log from the bare remote.
func (r *remote) branchEvents() []event {
	r.t.Helper()
	return parseEvents(r.t, r.git(r.bare, "show", "pickup:events.log"))
}

// branchFiles lists the board branch's files on the remote.
func (r *remote) branchFiles() []string {
	r.t.Helper()
	return strings.Fields(r.git(r.bare, "ls-tree", "-r", "--name-only", "pickup"))
}

// boardFiles lists a clone's board as the branch would: sessions, the
// event log and the settings (not .pickup/), and the event log's content.
func (c *clone) boardFiles() ([]string, string) {
	c.r.t.Helper()
	var files []string
	root := c.board()
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == ".pickup" {
				return filepath.SkipDir
			}
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	log, _ := os.ReadFile(filepath.Join(root, "events.log"))
	return files, string(log)
}

// agentFiles writes, in a new temporary folder, an agent script (text,
// executable) and a bin folder whose pickup links to binary: agents run
// with PATH=bin:… start pickup by name, as users' scripts do.
func agentFiles(t *testing.T, text, binary string) (tmp, script, bin string) {
	t.Helper()
	tmp = t.TempDir()
	script = filepath.Join(tmp, "agent.sh")
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binary, filepath.Join(bin, "pickup")); err != nil {
		t.Fatal(err)
	}
	return tmp, script, bin
}
