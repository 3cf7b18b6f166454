package mcpe2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pickup-dev/pickup/internal/privatepg"
	"github.com/pickup-dev/pickup/internal/testbin"
)

var (
	tmpRoot string
	bin     string // pickup, pickup-mcp and pickup-postgres
	// runDir holds the sockets of the pickup-postgres daemons that the
	// tests start; they exit when it is removed.
	runDir string
)

// TestMain builds the binaries once (without -race: they are started
// hundreds of times), runs the tests, and stops the PostgreSQL server if
// one was started.
func TestMain(m *testing.M) {
	if os.Getenv(agentEnv) != "" {
		os.Exit(agentMain())
	}
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	d, err := os.MkdirTemp("", "mcpe2e-")
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
	defer os.RemoveAll(runDir) // before the data: the daemons see it and exit
	exe, err := testbin.Build(tmpRoot)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bin = filepath.Dir(exe)
	for _, p := range []struct{ name, pkg string }{
		{"pickup-mcp", "github.com/pickup-dev/pickup/internal/cmd/pickup-mcp"},
		{"pickup-postgres", "github.com/pickup-dev/pickup/internal/cmd/pickup-postgres"},
	} {
		if out, err := exec.Command("go", "build", "-race=false", "-o", filepath.Join(bin, p.name), p.pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", p.pkg, err, out)
			return 1
		}
	}
	code := m.Run()
	pg.stop()
	return code
}

// pg is the run's private PostgreSQL server, started by the first test
// that needs it.
var pg pgOnce

type pgOnce struct {
	once sync.Once
	srv  *privatepg.Server
	err  error
}

func (p *pgOnce) server(t testing.TB) *privatepg.Server {
	t.Helper()
	p.once.Do(func() {
		p.srv, p.err = privatepg.Start(filepath.Join(tmpRoot, "pg"), privatepg.Options{NoFsync: true})
	})
	if p.err != nil {
		t.Fatalf("start a private PostgreSQL server: %v", p.err)
	}
	return p.srv
}

func (p *pgOnce) stop() {
	if p.srv != nil {
		_ = p.srv.Stop("immediate")
	}
}
