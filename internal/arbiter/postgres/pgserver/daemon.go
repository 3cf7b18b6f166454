package pgserver

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Daemon serves the line protocol on a unix socket to the pickup
// processes of one machine, with a pool of connections to one database:
// a pickup process then pays neither for starting a helper nor for a
// PostgreSQL connection (a backend forked, authentication), only for its
// requests. It exits after idle without a client, or when its socket is
// removed or replaced.
type Daemon struct {
	Socket string
	URL    string
	Idle   time.Duration

	mu      sync.Mutex
	pool    []*Server
	clients int
	last    time.Time
}

// ErrRunning: another daemon serves the socket.
var ErrRunning = errors.New("a daemon serves this socket already")

// Run listens and serves until idle. Only one daemon per socket runs: it
// holds an exclusive flock on <socket>.lock for its whole life.
func (d *Daemon) Run() error {
	lockFD, err := unix.Open(d.Socket+".lock", unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer unix.Close(lockFD)
	if err := unix.Flock(lockFD, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return ErrRunning
	}
	_ = os.Remove(d.Socket) // a dead daemon's
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: d.Socket, Net: "unix"})
	if err != nil {
		return err
	}
	// Closing a listener would unlink its path, by name: once the socket
	// was replaced, that is another daemon's (or a test's) socket, and the
	// command about to dial it would find none. watch removes ours itself.
	l.SetUnlinkOnClose(false)
	var ours unix.Stat_t
	if err := unix.Lstat(d.Socket, &ours); err != nil {
		l.Close()
		return err
	}
	d.last = time.Now()
	go d.watch(l, ours.Ino)
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				d.closeAll()
				return nil
			}
			continue
		}
		d.mu.Lock()
		d.clients++
		d.mu.Unlock()
		go d.serve(c)
	}
}

// watch closes the listener when the daemon has been idle long enough or
// its socket is no longer its own.
func (d *Daemon) watch(l net.Listener, ino uint64) {
	for {
		time.Sleep(250 * time.Millisecond)
		var st unix.Stat_t
		gone := unix.Lstat(d.Socket, &st) != nil || st.Ino != ino
		d.mu.Lock()
		idle := d.clients == 0 && time.Since(d.last) > d.Idle
		d.mu.Unlock()
		if gone || idle {
			if !gone {
				_ = os.Remove(d.Socket)
			}
			l.Close()
			return
		}
	}
}

// serve answers one pickup process, on a pooled connection.
func (d *Daemon) serve(c net.Conn) {
	defer c.Close()
	s := d.take()
	_ = Serve2(s, c, c)
	d.give(s)
}

func (d *Daemon) take() *Server {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := len(d.pool); n > 0 {
		s := d.pool[n-1]
		d.pool = d.pool[:n-1]
		return s
	}
	return &Server{}
}

func (d *Daemon) give(s *Server) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clients--
	d.last = time.Now()
	if s.conn != nil && !s.conn.IsClosed() && !s.listening && len(d.pool) < 32 {
		d.pool = append(d.pool, s)
		return
	}
	s.close()
}

func (d *Daemon) closeAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.pool {
		s.close()
	}
	d.pool = nil
}

// Detach makes the calling process a daemon's: its own session, standard
// input and output on /dev/null.
func Detach() {
	_, _ = syscall.Setsid()
	if f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		_ = unix.Dup2(int(f.Fd()), 0)
		_ = unix.Dup2(int(f.Fd()), 1)
		f.Close()
	}
}

func (d *Daemon) String() string { return fmt.Sprintf("pickup-postgres daemon on %s", d.Socket) }
