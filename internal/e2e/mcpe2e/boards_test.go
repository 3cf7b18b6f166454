package mcpe2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbin"
)

// world is one shared board seen from two clones on this machine, and
// what its arbiter (the git remote's board branch, the database) says.
type world struct {
	t      *testing.T
	kind   string // "git" or "pg"
	clones [2]*clone
	// where says where the arbiter has session id: "todo", "done",
	// "doing/OWNER", or "" when it has none.
	where func(id string) string
	// ops lists the arbiter's events of id, oldest first ("new",
	// "claim", "next", "done", "reap", …).
	ops func(id string) []string
}

// clone is one working directory of the repository, with its board at
// .spx/sessions, as a user has it.
type clone struct {
	t    *testing.T
	name string
	dir  string
	env  []string
}

// kinds are the shared boards every test runs on.
var kinds = []string{"git", "pg"}

func newWorld(t *testing.T, kind string) *world {
	t.Helper()
	switch kind {
	case "git":
		return gitWorld(t)
	case "pg":
		return pgWorld(t)
	}
	t.Fatalf("no world %q", kind)
	return nil
}

// baseEnv is the environment of every child: none of the user's pickup,
// git, PostgreSQL or agent settings; the built binaries first on PATH.
func baseEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PICKUP_") || strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "PG") || strings.HasPrefix(k, "CLAUDE") ||
			k == "HOME" || k == "PATH" || k == "CODEX_THREAD_ID" || k == "XDG_CONFIG_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1", "PICKUP_NO_SYNC=1", "PICKUP_PG_RUNDIR="+runDir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
}

// run runs a program in dir with env and fails the test unless it exits 0.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// result is one pickup process's outcome.
type result struct {
	code           int
	stdout, stderr string
}

// pickup runs the real pickup in the clone as owner ("" for none given).
func (c *clone) pickup(ctx context.Context, owner string, args ...string) result {
	if owner != "" {
		args = append([]string{"--owner", owner}, args...)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "pickup"), args...)
	cmd.Dir, cmd.Env = c.dir, c.env
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
	c.t.Helper()
	res := c.pickup(context.Background(), owner, args...)
	if res.code != 0 {
		c.t.Fatalf("%s: pickup %s: exit %d\n%s%s", c.name, strings.Join(args, " "), res.code, res.stdout, res.stderr)
	}
	return res.stdout
}

// newSession creates a session in the clone and returns its id.
func (c *clone) newSession(title string) string {
	c.t.Helper()
	f := strings.Fields(c.must("", "new", "--title", title))
	if len(f) == 0 {
		c.t.Fatalf("%s: pickup new printed nothing", c.name)
	}
	return f[0]
}

// dones counts the arbiter's done events of id.
func (w *world) dones(id string) int {
	n := 0
	for _, op := range w.ops(id) {
		if op == "done" {
			n++
		}
	}
	return n
}

// localDoing lists the ids the clone's own board has in doing/ (any owner).
func (c *clone) localDoing() map[string]string {
	out := map[string]string{}
	files, _ := filepath.Glob(filepath.Join(c.dir, ".spx", "sessions", "doing", "*", "*.md"))
	for _, f := range files {
		out[strings.TrimSuffix(filepath.Base(f), ".md")] = filepath.Base(filepath.Dir(f))
	}
	return out
}

// gitWorld: a bare repository served by git daemon on 127.0.0.1, two
// clones, the first running init --shared, the second joining.
func gitWorld(t *testing.T) *world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testbin.WaitDetached(root) }) // heartbeat pushes still at work
	home := filepath.Join(root, "home")
	srv := filepath.Join(root, "srv")
	bare := filepath.Join(srv, "board.git")
	for _, d := range []string{home, srv} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := baseEnv(home)
	run(t, root, env, "git", "init", "-q", "--bare", bare)
	port := gitDaemon(t, srv, env)
	url := fmt.Sprintf("git://127.0.0.1:%d/board.git", port)
	w := &world{t: t, kind: "git"}
	for i := range w.clones {
		c := &clone{t: t, name: fmt.Sprintf("c%d", i), dir: filepath.Join(root, fmt.Sprintf("c%d", i)), env: env}
		run(t, root, env, "git", "clone", "-q", url, c.dir)
		c.must("", "init", "--shared")
		w.clones[i] = c
	}
	files := func() []string {
		return strings.Fields(run(t, bare, env, "git", "ls-tree", "-r", "--name-only", "pickup"))
	}
	w.where = func(id string) string {
		for _, f := range files() {
			if strings.HasSuffix(f, "/"+id+".md") {
				return filepath.Dir(f)
			}
		}
		return ""
	}
	w.ops = func(id string) []string {
		var ops []string
		for _, l := range strings.Split(run(t, bare, env, "git", "show", "pickup:events.log"), "\n") {
			var e struct{ ID, Op string }
			if json.Unmarshal([]byte(l), &e) == nil && e.ID == id {
				ops = append(ops, e.Op)
			}
		}
		return ops
	}
	return w
}

// gitDaemon serves base on a free port of 127.0.0.1 until the test ends.
func gitDaemon(t *testing.T, base string, env []string) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	exe := "/usr/lib/git-core/git-daemon"
	if _, err := os.Stat(exe); err != nil {
		exe = "git-daemon"
	}
	cmd := exec.Command(exe, "--reuseaddr", "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port),
		"--base-path="+base, "--export-all", "--enable=receive-pack", base)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatalf("git daemon: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// Polled until it listens; the bound only catches a daemon that
	// never does.
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return port
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("git daemon did not listen on %d: %v", port, err)
		}
	}
}

var dbSeq atomic.Int64

// pgWorld: a database of the run's private server, two repositories
// whose boards share it (init --shared URL in each).
func pgWorld(t *testing.T) *world {
	t.Helper()
	srv := pg.server(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env := baseEnv(home)
	db := fmt.Sprintf("mcp%d_%d", os.Getpid(), dbSeq.Add(1))
	psql := func(sql string) string {
		t.Helper()
		return strings.TrimSpace(run(t, root, env, "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
			"-h", "127.0.0.1", "-p", strconv.Itoa(srv.Port), "-U", "pickup", "-d", "postgres", "-c", sql))
	}
	psql("CREATE DATABASE " + db)
	query := func(sql string) string {
		t.Helper()
		return strings.TrimSpace(run(t, root, env, "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
			"-h", "127.0.0.1", "-p", strconv.Itoa(srv.Port), "-U", "pickup", "-d", db, "-c", sql))
	}
	w := &world{t: t, kind: "pg"}
	for i := range w.clones {
		c := &clone{t: t, name: fmt.Sprintf("c%d", i), dir: filepath.Join(root, fmt.Sprintf("c%d", i)), env: env}
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		run(t, c.dir, env, "git", "init", "-q")
		c.must("", "init", "--shared", srv.URL(db))
		w.clones[i] = c
	}
	w.where = func(id string) string {
		got := query("SELECT state || '/' || coalesce(owner, '') FROM pickup_sessions WHERE id = '" + id + "'")
		return strings.TrimSuffix(got, "/")
	}
	w.ops = func(id string) []string {
		return strings.Fields(query("SELECT string_agg(op, ' ' ORDER BY seq) FROM pickup_events WHERE id = '" + id + "'"))
	}
	return w
}
