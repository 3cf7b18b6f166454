package pgways

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDoctorOnPostgresBoard: pickup doctor on a PostgreSQL board is
// quiet where sessions moved on other boards (the mirror writes their
// transitions into this board's history), and says what is wrong, with
// the fix, when the helper is not installed beside pickup or the
// database does not answer.
func TestDoctorOnPostgresBoard(t *testing.T) {
	_, url := newDatabase(t)
	cs := clones(t, url, 2)
	a, b := cs[0], cs[1]
	first := strings.TrimSpace(a.must("", "new", "-t", "made in a"))
	second := strings.TrimSpace(b.must("", "new", "-t", "made in b"))
	b.must("bob", "claim", first)
	b.must("bob", "done", first)
	a.must("alice", "claim", second)
	// Each board learns the other's moves.
	a.must("", "list")
	b.must("", "list")
	time.Sleep(2500 * time.Millisecond) // doctor leaves moves younger than 2 s alone
	for _, c := range cs {
		if res := c.pickup(context.Background(), "", "doctor"); res.code != 0 || !strings.Contains(res.stdout, "is healthy") {
			t.Errorf("doctor on %s: exit %d, want 0 and healthy\n%s%s", c.name, res.code, res.stdout, res.stderr)
		}
	}

	t.Run("no helper", func(t *testing.T) {
		// pickup alone in a folder, nothing but the system on PATH.
		lone := t.TempDir()
		data, err := os.ReadFile(filepath.Join(bin, "pickup"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(lone, "pickup"), data, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(filepath.Join(lone, "pickup"), "--dir", a.dir, "doctor")
		cmd.Env = append(env(a.home), "PATH=/usr/bin:/bin")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "config.yaml: postgres: ") ||
			!strings.Contains(string(out), "pickup-postgres, which is neither beside pickup nor on PATH") ||
			!strings.Contains(string(out), "go install github.com/pickup-dev/pickup/internal/cmd/pickup-postgres@latest") {
			t.Errorf("doctor without the helper: %v, want exit 1 naming the helper and how to install it\n%s", err, out)
		}
	})

	t.Run("database unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := "postgres://pickup@" + l.Addr().String() + "/nothing?sslmode=disable"
		l.Close()
		cfg := filepath.Join(a.dir, "config.yaml")
		data, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		redacted := url // it has no password
		if !strings.Contains(string(data), "shared: "+redacted) {
			t.Fatalf("config.yaml does not hold shared: %s:\n%s", redacted, data)
		}
		if err := os.WriteFile(cfg, []byte(strings.Replace(string(data), "shared: "+redacted, "shared: "+dead, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		// Doctor rides over the failure for the network deadline the
		// commands have, $PICKUP_NETWORK_TIMEOUT here, and says so.
		res := a.pickupEnv(context.Background(), "", []string{"PICKUP_NETWORK_TIMEOUT=2s"}, "doctor")
		if res.code != 1 || !strings.Contains(res.stdout, "config.yaml: postgres: the database does not answer: ") ||
			!strings.Contains(res.stdout, "check that the database answers") || !strings.Contains(res.stdout, "network_timeout 2s") {
			t.Errorf("doctor with the database unreachable: exit %d, want 1 saying so with the fix, after the 2 s network deadline\n%s%s", res.code, res.stdout, res.stderr)
		}
	})
}
