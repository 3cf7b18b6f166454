// Package privatepg starts a private PostgreSQL server for pickup's tests
// and benchmarks: Debian's server programs (the newest version installed),
// initdb'd into a folder of ours, listening on a free port of 127.0.0.1
// and on a socket in that folder, with one trusted superuser "pickup".
// Run as root, it runs the server as nobody, since PostgreSQL refuses to
// run as root.
//
// It is not for production: the server trusts every local connection.
package privatepg

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// BinDir is where Debian keeps PostgreSQL's server programs: the newest
// version installed.
func BinDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	best, bestV := "/usr/lib/postgresql/15/bin", 0
	for _, d := range dirs {
		if v, err := strconv.Atoi(filepath.Base(filepath.Dir(d))); err == nil && v > bestV {
			best, bestV = d, v
		}
	}
	return best
}

// Options are how a server is made.
type Options struct {
	// NoFsync makes initdb and the server skip fsync: for tests, whose
	// data need not outlive a crash of the machine. Benchmarks keep the
	// default (fsync on), which is what users run.
	NoFsync bool
}

// Server is a private PostgreSQL server.
type Server struct {
	Dir  string // its folder: data/, log and the socket
	Data string // its data folder (Dir/data)
	Port int    // its port on 127.0.0.1

	bin    string
	asUser string // run its programs as this user ("" as ourselves)
	opts   Options
	mu     sync.Mutex // one pg_ctl at a time
}

// Start makes a server in dir (initdb) and starts it.
func Start(dir string, opts Options) (*Server, error) {
	s := &Server{Dir: dir, Data: filepath.Join(dir, "data"), bin: BinDir(), opts: opts}
	if _, err := os.Stat(filepath.Join(s.bin, "initdb")); err != nil {
		return nil, fmt.Errorf("PostgreSQL is not installed (%v): install Debian's postgresql package (scripts/test does)", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		// The server refuses to run as root.
		s.asUser = "nobody"
		u, err := user.Lookup(s.asUser)
		if err != nil {
			return nil, err
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		// nobody must reach it: the folders of ours above it may be
		// 0700 (os.MkdirTemp's).
		for p := filepath.Dir(dir); p != "/" && p != os.TempDir() && p != "."; p = filepath.Dir(p) {
			_ = os.Chmod(p, 0o755)
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s.Port = port
	initdb := []string{"-D", s.Data, "-A", "trust", "-U", "pickup"}
	if opts.NoFsync {
		initdb = append(initdb, "--no-sync")
	}
	if out, err := s.run("initdb", initdb...); err != nil {
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := s.Restart(); err != nil {
		return nil, err
	}
	if err := s.stopWhenGone(os.Getpid()); err != nil {
		_ = s.Stop("immediate")
		return nil, err
	}
	return s, nil
}

// stopWhenGone starts a watchdog that stops the server (immediate mode)
// once process pid has gone: a test binary killed by its -timeout, or by
// a person, never runs its cleanup, and its server would run on. The
// watchdog is a shell in a session of its own, so the signals that kill
// the test do not reach it; it checks every second.
func (s *Server) stopWhenGone(pid int) error {
	stop := fmt.Sprintf("%q -D %q -m immediate -w stop", filepath.Join(s.bin, "pg_ctl"), s.Data)
	if s.asUser != "" {
		stop = fmt.Sprintf("runuser -u %s -- %s", s.asUser, stop)
	}
	script := fmt.Sprintf("while kill -0 %d 2>/dev/null; do sleep 1; done; [ -f %q ] && %s", pid, filepath.Join(s.Data, "postmaster.pid"), stop)
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = s.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the server's watchdog: %w", err)
	}
	return cmd.Process.Release()
}

// progTimeout bounds one of PostgreSQL's programs, and progWait (in
// seconds, for pg_ctl -t) its wait for the server: room for a machine
// many times slower than a quiet one, where initdb takes a few seconds.
const (
	progTimeout = 5 * time.Minute
	progWait    = "280"
)

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// run runs one of PostgreSQL's programs as the server's user, for at most
// progTimeout (a hang, not a slow machine: initdb takes seconds).
func (s *Server) run(prog string, args ...string) ([]byte, error) {
	path := filepath.Join(s.bin, prog)
	if s.asUser != "" {
		args = append([]string{"-u", s.asUser, "--", path}, args...)
		path = "runuser"
	}
	ctx, cancel := context.WithTimeout(context.Background(), progTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = s.Dir
	return cmd.CombinedOutput()
}

// Restart starts the server again after Stop (Start has started it).
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=200", s.Port, s.Dir)
	if s.opts.NoFsync {
		opts += " -c fsync=off"
	}
	if out, err := s.run("pg_ctl", "-D", s.Data, "-l", filepath.Join(s.Dir, "log"), "-o", opts, "-w", "-t", progWait, "start"); err != nil {
		return fmt.Errorf("pg_ctl start: %v\n%s", err, out)
	}
	return nil
}

// Stop stops the server with pg_ctl's shutdown mode: "fast" (a
// checkpoint, clients cut) or "immediate" (the way a crash does: no
// checkpoint).
func (s *Server) Stop(mode string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if out, err := s.run("pg_ctl", "-D", s.Data, "-m", mode, "-w", "-t", progWait, "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	return nil
}

// URL is the URL of database db on the server, as its superuser.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://pickup@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}
