package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/privatepg"
	"github.com/pickup-dev/pickup/internal/testbin"
)

// The shared boards of these tests are real: two clones of a bare
// repository served by `git daemon` on 127.0.0.1, or two boards of one
// database of a private PostgreSQL server; pickup, pickup-postgres and
// pickup-web run as processes, and the page's actions are sent as a
// browser sends them (same origin, the token).

var (
	pgOnce   sync.Once
	pgServer *privatepg.Server
	pgDir    string
	pgErr    error
	pgSeq    int
	pgMu     sync.Mutex
	helperMu sync.Once
	helperE  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if pgServer != nil {
		_ = pgServer.Stop("immediate")
	}
	if pgDir != "" {
		_ = os.RemoveAll(pgDir)
	}
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binPath is the folder of pickup and pickup-postgres (built once), which
// the children find first on PATH.
func binPath(t *testing.T) string {
	t.Helper()
	bin := filepath.Dir(pickupBin.Path(t, buildDir(t)))
	helperMu.Do(func() {
		out, err := exec.Command("go", "build", "-race=false", "-o", filepath.Join(bin, "pickup-postgres"), "github.com/pickup-dev/pickup/internal/cmd/pickup-postgres").CombinedOutput()
		if err != nil {
			helperE = fmt.Errorf("go build pickup-postgres: %v\n%s", err, out)
		}
	})
	if helperE != nil {
		t.Fatal(helperE)
	}
	return bin
}

// sharedEnv is the children's environment: no user's git, pickup or
// PostgreSQL settings; pickup and its helper first on PATH.
func sharedEnv(t *testing.T, home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PICKUP_") || strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "PG") || strings.HasPrefix(k, "CLAUDE") ||
			k == "HOME" || k == "PATH" || k == "CODEX_THREAD_ID" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "PATH="+binPath(t)+":"+os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "PICKUP_NO_SYNC=1",
		"PICKUP_PG_DAEMON=0", // each process its own helper: nothing outlives the test
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
}

// shared is two boards of one shared board ("git" or "postgres"), A and
// B, and a look at their arbiter.
type shared struct {
	t      *testing.T
	kind   string
	boards [2]string // board directories
	cwd    [2]string
	env    []string
	bare   string // git: the remote's repository
	db     string // postgres: the database
}

type result struct {
	code           int
	stdout, stderr string
}

// pickup runs pickup on board i as owner ("" for none).
func (s *shared) pickup(i int, owner string, args ...string) result {
	args = append([]string{"--dir", s.boards[i]}, args...)
	if owner != "" {
		args = append([]string{"--owner", owner}, args...)
	}
	cmd := exec.Command(filepath.Join(binPath(s.t), "pickup"), args...)
	cmd.Dir, cmd.Env = s.cwd[i], s.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.code = ee.ExitCode()
	} else if err != nil {
		res.code, res.stderr = -1, res.stderr+err.Error()
	}
	return res
}

func (s *shared) must(i int, owner string, args ...string) string {
	s.t.Helper()
	res := s.pickup(i, owner, args...)
	if res.code != 0 {
		s.t.Fatalf("board %c: pickup %s: exit %d\n%s%s", 'A'+i, strings.Join(args, " "), res.code, res.stdout, res.stderr)
	}
	return res.stdout
}

// newSession makes a session on board i and returns its id.
func (s *shared) newSession(i int, title string, args ...string) string {
	s.t.Helper()
	out := s.must(i, "", append([]string{"new", "--title", title}, append(args, "-")...)...)
	return strings.Fields(out)[0]
}

// serve starts pickup-web on board i with --actions.
func (s *shared) serve(i int) *webServer {
	s.t.Helper()
	return startServerEnv(s.t, s.boards[i], "127.0.0.1:0", s.env, s.cwd[i], "--actions")
}

// run runs a program of the test (git, psql) and returns its output.
func (s *shared) run(dir string, name string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// arbiter is what the arbiter has: each session's place and content,
// and its history (op id owner, one a line), sorted.
func (s *shared) arbiter() (places map[string]string, history string) {
	s.t.Helper()
	places = map[string]string{}
	var lines []string
	switch s.kind {
	case "git":
		for _, f := range strings.Fields(s.run(s.bare, "git", "ls-tree", "-r", "--name-only", "pickup")) {
			dir, name := filepath.Split(f)
			if id, ok := strings.CutSuffix(name, ".md"); ok && dir != "" {
				places[id] = strings.TrimSuffix(dir, "/") + "\n" + s.run(s.bare, "git", "show", "pickup:"+f)
			}
		}
		for _, l := range strings.Split(s.run(s.bare, "git", "show", "pickup:events.log"), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	default:
		for _, row := range strings.Split(s.psql("SELECT id || ' ' || CASE WHEN owner = '' THEN state ELSE state || '/' || owner END || ' ' || md5(body) FROM pickup_sessions"), "\n") {
			if f := strings.Fields(row); len(f) == 3 {
				places[f[0]] = f[1] + "\n" + f[2]
			}
		}
		for _, l := range strings.Split(s.psql("SELECT op || ' ' || id || ' ' || owner || ' ' || version FROM pickup_events"), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	sort.Strings(lines)
	return places, strings.Join(lines, "\n")
}

// place is where the arbiter has session id ("todo", "doing/x"; "" for
// nowhere).
func (s *shared) place(id string) string {
	places, _ := s.arbiter()
	p, _, _ := strings.Cut(places[id], "\n")
	return p
}

// priorityAt reports whether the arbiter's history has a priority change
// of session id by owner.
func (s *shared) priorityAt(id, owner string) bool {
	_, history := s.arbiter()
	for _, l := range strings.Split(history, "\n") {
		if s.kind == "git" && strings.Contains(l, `"id":"`+id+`","op":"priority"`) && strings.Contains(l, `"owner":"`+owner+`"`) {
			return true
		}
		if s.kind != "git" && strings.HasPrefix(l, "priority "+id+" "+owner+" ") {
			return true
		}
	}
	return false
}

func (s *shared) psql(sql string) string {
	s.t.Helper()
	return s.run("", "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(pgServer.Port), "-U", "pickup", "-d", s.db, "-c", sql)
}

// gitShared makes a bare repository served by git daemon on 127.0.0.1
// and two clones whose boards are shared through it.
func gitShared(t *testing.T) *shared {
	t.Helper()
	root := t.TempDir()
	// Before root goes: the heartbeat pushes that claims start detached
	// may still work in it.
	t.Cleanup(func() { testbin.WaitDetached(root) })
	home := filepath.Join(root, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &shared{t: t, kind: "git", env: sharedEnv(t, home), bare: filepath.Join(root, "srv", "board.git")}
	s.run(root, "git", "init", "-q", "--bare", s.bare)
	port := gitDaemon(t, s, filepath.Join(root, "srv"))
	for i := range 2 {
		s.cwd[i] = filepath.Join(root, fmt.Sprintf("clone%c", 'A'+i))
		s.run(root, "git", "clone", "-q", fmt.Sprintf("git://127.0.0.1:%d/board.git", port), s.cwd[i])
		s.boards[i] = filepath.Join(s.cwd[i], ".spx", "sessions")
		cmd := exec.Command(filepath.Join(binPath(t), "pickup"), "init", "--shared")
		cmd.Dir, cmd.Env = s.cwd[i], s.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("init --shared in clone %c: %v\n%s", 'A'+i, err, out)
		}
	}
	return s
}

// gitDaemon serves base on a free port of 127.0.0.1 until the test ends.
func gitDaemon(t *testing.T, s *shared, base string) int {
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
	cmd.Env = s.env
	if err := cmd.Start(); err != nil {
		t.Fatalf("git daemon: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for since := time.Now(); ; {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return port
		}
		if time.Since(since) > hang {
			t.Fatalf("git daemon did not listen on %d within %s: %v", port, hang, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pgShared makes a database of the private PostgreSQL server (started
// once for the package) and two boards shared through it.
func pgShared(t *testing.T) *shared {
	t.Helper()
	pgOnce.Do(func() {
		if pgDir, pgErr = os.MkdirTemp("", "pickup-web-pg"); pgErr != nil {
			return
		}
		pgServer, pgErr = privatepg.Start(filepath.Join(pgDir, "pg"), privatepg.Options{NoFsync: true})
	})
	if pgErr != nil {
		t.Fatal(pgErr)
	}
	root := t.TempDir()
	// Before root goes: the heartbeat pushes that claims start detached
	// may still work in it.
	t.Cleanup(func() { testbin.WaitDetached(root) })
	home := filepath.Join(root, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	pgMu.Lock()
	pgSeq++
	s := &shared{t: t, kind: "postgres", env: sharedEnv(t, home), db: fmt.Sprintf("web%d_%d", os.Getpid(), pgSeq)}
	pgMu.Unlock()
	s.run("", "psql", "-X", "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(pgServer.Port), "-U", "pickup", "-d", "postgres", "-c", "CREATE DATABASE "+s.db)
	for i := range 2 {
		s.cwd[i] = filepath.Join(root, fmt.Sprintf("machine%c", 'A'+i))
		s.boards[i] = filepath.Join(s.cwd[i], "board")
		if err := os.MkdirAll(s.cwd[i], 0o755); err != nil {
			t.Fatal(err)
		}
		s.must(i, "", "init", "--shared", pgServer.URL(s.db))
	}
	return s
}

// act sends the page's action to srv as the browser does (its own
// origin, the token), by the person ana.
func act(t *testing.T, srv *webServer, action string, form url.Values) (int, string) {
	t.Helper()
	form.Set("by", "ana")
	return srv.send(t, call{method: "POST", path: "/api/" + action, origin: "http://" + srv.Host, bearer: srv.Token, form: form})
}

// far runs pickup on board i as owner on another host: a UTS namespace
// of its own, named far.invalid (unshare needs root, which the tests run
// as; other users get a clear failure).
func (s *shared) far(i int, owner string, args ...string) result {
	s.t.Helper()
	if os.Geteuid() != 0 {
		s.t.Fatal("another host is simulated with unshare --uts, which needs root: run the tests as root (scripts/test does)")
	}
	all := append([]string{"--uts", "sh", "-c", `hostname far.invalid && exec "$0" "$@"`, filepath.Join(binPath(s.t), "pickup"),
		"--dir", s.boards[i], "--owner", owner}, args...)
	cmd := exec.Command("unshare", all...)
	cmd.Dir, cmd.Env = s.cwd[i], s.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.code = ee.ExitCode()
	} else if err != nil {
		s.t.Fatalf("unshare pickup %v: %v", args, err)
	}
	return res
}

func equalPlaces(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
