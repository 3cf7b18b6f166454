package pgways

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter/postgres"
	"golang.org/x/sys/unix"
)

// TestDaemonGoneAtConnect: the machine's pickup-postgres daemon exits
// (idle) just as a command connects to it: the command starts a new one
// and succeeds, instead of failing with exit 8.
func TestDaemonGoneAtConnect(t *testing.T) {
	db, url := newDatabase(t)
	c := clones(t, url, 1)[0]
	// Stand in for a daemon on its way out: take its socket (the real one
	// exits when its socket is replaced), accept one connection, then go
	// away before answering.
	sock := postgres.SocketPath(runDir, filepath.Join(bin, postgres.HelperName), url)
	_ = os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		conn, err := l.Accept()
		l.Close()
		_ = os.Remove(sock)
		if err == nil {
			conn.Close()
		}
	}()
	// The daemon that served the clone's setup sees its socket replaced
	// and exits: wait for that (its lock comes free), so that it can no
	// longer take the new socket with it.
	waitUnlocked(t, sock+".lock")
	id := strings.TrimSpace(c.must("", "new", "-t", "after the daemon left"))
	select {
	case <-accepted:
	case <-time.After(time.Minute):
		t.Fatalf("new succeeded without connecting to %s: the socket was gone", sock)
	}
	if got := server.psql(t, db, "SELECT count(*) FROM pickup_sessions WHERE id = '"+id+"'"); got != "1" {
		t.Errorf("the database has %s rows for %s, want 1", got, id)
	}
}

// waitUnlocked waits until no process holds the flock on path (none
// holds it if there is no such file), bounded by a minute from the start.
func waitUnlocked(t *testing.T, path string) {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	for deadline := time.Now().Add(time.Minute); unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil; {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon holding %s did not exit within a minute of its socket being replaced", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = unix.Flock(fd, unix.LOCK_UN)
}

// TestDaemonOfAnotherInstall: a pickup installed anew (another
// pickup-postgres: a new file, or the same path rewritten) never talks to
// the daemon that the install before it started, which may not know its
// requests: its socket's name changes with the helper, and the command
// starts a daemon of its own install.
func TestDaemonOfAnotherInstall(t *testing.T) {
	_, url := newDatabase(t)
	c := clones(t, url, 1)[0]
	helper := filepath.Join(t.TempDir(), postgres.HelperName)
	install := func(at time.Time) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(bin, postgres.HelperName))
		if err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(helper)
		if err := os.WriteFile(helper, data, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(helper, at, at); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PICKUP_POSTGRES_HELPER=" + helper}
	run := func(title string) {
		t.Helper()
		if res := c.pickupEnv(context.Background(), "", env, "new", "-t", title); res.code != 0 {
			t.Fatalf("new %q: exit %d\n%s", title, res.code, res.stderr)
		}
	}
	install(time.Now().Add(-time.Hour))
	run("with the first install")
	first := postgres.SocketPath(runDir, helper, url)
	if _, err := os.Stat(first); err != nil {
		t.Fatalf("no daemon of the first install: %v", err)
	}
	install(time.Now())
	second := postgres.SocketPath(runDir, helper, url)
	if second == first {
		t.Fatalf("the daemon's socket is named the same for two installs: %s", first)
	}
	run("with the second install")
	if _, err := os.Stat(second); err != nil {
		t.Fatalf("the second install started no daemon of its own: %v", err)
	}
}

// TestDaemonFolderUnsafe: a sockets' folder that other users could write
// to is not used; the command still works, with a helper of its own, and
// warns: what is wrong, with which folder, and the fix.
func TestDaemonFolderUnsafe(t *testing.T) {
	db, url := newDatabase(t)
	c := clones(t, url, 1)[0]
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // past the umask
		t.Fatal(err)
	}
	res := c.pickupEnv(context.Background(), "", []string{"PICKUP_PG_RUNDIR=" + dir}, "new", "-t", "with an unsafe folder")
	if res.code != 0 {
		t.Fatalf("new: exit %d\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"pickup: warning: no pickup-postgres daemon", dir, "mode 0700", "slower"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("the warning does not say %q:\n%s", want, res.stderr)
		}
	}
	if got := server.psql(t, db, "SELECT count(*) FROM pickup_sessions"); got != "1" {
		t.Errorf("the database has %s sessions, want 1", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a daemon used the unsafe folder: %v", entries)
	}
	// The folder the tests use (0700): no warning.
	if res := c.pickup(context.Background(), "", "new", "-t", "with the daemon"); res.code != 0 || res.stderr != "" {
		t.Errorf("new with the daemon: exit %d, stderr %q", res.code, res.stderr)
	}
}
