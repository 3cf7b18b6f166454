package pgways

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/privatepg"
	"github.com/pickup-dev/pickup/internal/testbin"
)

var (
	tmpRoot string
	server  *pgServer
	bin     string // folder with pickup and pickup-postgres
	// runDir holds the sockets of the pickup-postgres daemons that the
	// tests start; they exit when it is removed.
	runDir string
)

// TestMain builds pickup and its helper, starts one private PostgreSQL
// server for the whole run (as an unprivileged user when run as root) and
// stops it at the end.
func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	d, err := os.MkdirTemp("", "pgways-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmpRoot = d
	defer os.RemoveAll(d)
	runDir = filepath.Join(d, "run")
	if err := os.Mkdir(runDir, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		os.RemoveAll(runDir)
		time.Sleep(500 * time.Millisecond) // the daemons see it and exit
	}()
	exe, err := testbin.Build(tmpRoot)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bin = filepath.Dir(exe)
	out, err := exec.Command("go", "build", "-race=false", "-o", filepath.Join(bin, "pickup-postgres"), "github.com/pickup-dev/pickup/internal/cmd/pickup-postgres").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build pickup-postgres: %v\n%s", err, out)
		return 1
	}
	srv, err := privatepg.Start(filepath.Join(tmpRoot, "pg"), privatepg.Options{NoFsync: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	server = &pgServer{srv}
	defer func() { _ = server.Stop("immediate") }()
	return m.Run()
}

// pgServer is the run's private PostgreSQL server, with psql at hand.
type pgServer struct{ *privatepg.Server }

// psql runs SQL in database db and returns its unaligned output.
func (s *pgServer) psql(t testing.TB, db, sql string) string {
	t.Helper()
	out, err := s.psqlErr(db, sql)
	if err != nil {
		t.Fatalf("psql %q: %v\n%s", sql, err, out)
	}
	return strings.TrimSpace(out)
}

func (s *pgServer) psqlErr(db, sql string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-U", "pickup", "-d", db, "-c", sql)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var dbSeq atomic.Int64

// newDatabase makes an empty database for one test and returns its URL.
func newDatabase(t testing.TB) (name, url string) {
	t.Helper()
	name = fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	server.psql(t, "postgres", "CREATE DATABASE "+name)
	return name, server.URL(name)
}

// env is the environment of every child: no user's pickup or PostgreSQL
// settings leak in; pickup and its helper come first on PATH.
func env(home string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PICKUP_") || strings.HasPrefix(k, "PG") || strings.HasPrefix(k, "CLAUDE") || k == "HOME" || k == "PATH" || k == "CODEX_THREAD_ID" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME="+home, "PICKUP_NO_SYNC=1", "PATH="+bin+":"+os.Getenv("PATH"),
		"PICKUP_PG_RUNDIR="+runDir, "PICKUP_PG_DAEMON="+os.Getenv("PGWAYS_DAEMON"))
}

// clone is one machine's board on the shared database.
type clone struct {
	t    testing.TB
	name string
	dir  string // its board
	home string
}

// clones makes n boards that share the database at url.
func clones(t testing.TB, url string, n int) []*clone {
	t.Helper()
	root := t.TempDir()
	var out []*clone
	for i := range n {
		c := &clone{t: t, name: fmt.Sprintf("c%d", i), dir: filepath.Join(root, fmt.Sprintf("c%d", i), "board"), home: filepath.Join(root, "home")}
		_ = os.MkdirAll(c.home, 0o755)
		if res := c.pickup(context.Background(), "", "init", "--shared", url); res.code != 0 {
			t.Fatalf("init --shared in %s: exit %d\n%s", c.name, res.code, res.stderr)
		}
		out = append(out, c)
	}
	return out
}

type result struct {
	code           int
	stdout, stderr string
}

// pickup runs pickup on the clone's board as owner ("" for none given).
func (c *clone) pickup(ctx context.Context, owner string, args ...string) result {
	return c.pickupEnv(ctx, owner, nil, args...)
}

// pickupEnv is pickup with more environment.
func (c *clone) pickupEnv(ctx context.Context, owner string, extra []string, args ...string) result {
	args = append([]string{"--dir", c.dir}, args...)
	if owner != "" {
		args = append([]string{"--owner", owner}, args...)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "pickup"), args...)
	cmd.Env = append(env(c.home), extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			c.t.Fatalf("pickup %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// must runs pickup and fails the test unless it exits 0.
func (c *clone) must(owner string, args ...string) string {
	c.t.Helper()
	res := c.pickup(context.Background(), owner, args...)
	if res.code != 0 {
		c.t.Fatalf("%s: pickup %v: exit %d\n%s%s", c.name, args, res.code, res.stdout, res.stderr)
	}
	return res.stdout
}

// files lists the session ids in a state folder of the clone's board
// ("doing/x" for an owner's).
func (c *clone) files(state string) []string {
	entries, _ := os.ReadDir(filepath.Join(c.dir, state))
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".md"); ok && e.Type().IsRegular() {
			ids = append(ids, id)
		}
	}
	return ids
}
