package postgres

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter/dburl"

	"golang.org/x/sys/unix"
)

// The line-protocol conversation with pickup-postgres (the machine's
// daemon, or a helper of this process's own): finding the helper, dialing,
// one request at a time.

// waitSlack is how much longer than its own timeout a wait may take to be
// answered: the daemon's connection, a LISTEN and a read of the version
// each have bounds of their own (pgserver's ConnectTimeout and
// RequestTimeout, 5 s and 15 s).
const waitSlack = 45 * time.Second

// channel is one line-protocol conversation with pickup-postgres: the
// machine's daemon or a helper of this process's own.
type channel struct {
	// noDaemon: why this channel is to a helper of its own when the
	// machine's daemon was wanted ("" if it is the daemon's, or not wanted).
	noDaemon string
	url      string // without a password, for errors
	mu       sync.Mutex
	cmd      *exec.Cmd
	sock     *os.File
	stdin    io.WriteCloser
	w        io.Writer
	stdout   *bufio.Reader
	broken   error // the helper failed: every later request fails so
	// slack is how much longer than its timeout a wait on the daemon
	// may take to be answered (waitSlack).
	slack time.Duration
}

// FindHelper returns the helper command: PICKUP_POSTGRES_HELPER, else
// pickup-postgres next to this executable (links resolved: a pickup linked
// into ~/bin finds the helper of its install, as release archives and npm
// place it), else on PATH.
func FindHelper() (string, error) {
	if p := os.Getenv("PICKUP_POSTGRES_HELPER"); p != "" {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		p := filepath.Join(filepath.Dir(exe), HelperName)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			return p, nil
		}
	}
	p, err := exec.LookPath(HelperName)
	if err != nil {
		return "", fmt.Errorf("postgres board: %s not found next to pickup nor on PATH (install it with pickup: go install github.com/pickup-dev/pickup/internal/cmd/pickup-postgres)", HelperName)
	}
	return p, nil
}

// dial opens a channel to the database at url: to the machine's daemon,
// else to a helper of its own.
func dial(helper, url string) (*channel, error) {
	redacted, _ := dburl.Redact(url)
	c := &channel{url: redacted}
	f, why := dialDaemon(helper, url)
	if f != nil {
		c.sock, c.w, c.slack = f, f, waitSlack
		c.stdout = bufio.NewReaderSize(f, 64<<10)
		return c, nil
	}
	c.noDaemon = why
	c.cmd = exec.Command(helper)
	c.cmd.Stderr = os.Stderr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	c.w = c.stdin
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.stdout = bufio.NewReaderSize(out, 64<<10)
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("postgres board: start %s: %w", helper, err)
	}
	return c, nil
}

// transportFailed reports whether the conversation itself broke (the
// helper went away), not the database.
func (c *channel) transportFailed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.broken != nil
}

func (c *channel) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sock != nil {
		_ = c.sock.Close()
		c.sock = nil
	}
	if c.cmd != nil {
		_ = c.stdin.Close()
		_ = c.cmd.Wait()
		c.cmd = nil
	}
	if c.broken == nil {
		c.broken = errors.New("closed")
	}
}

// call sends one request and reads its response. A response that failed is
// returned as a *DatabaseError for op.
func (c *channel) call(op string, req Request) (Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return Response{}, &DatabaseError{URL: c.url, Op: op, Err: c.broken}
	}
	data, err := json.Marshal(req)
	if err != nil {
		return Response{}, err
	}
	var res Response
	if c.sock != nil && req.TimeoutMS > 0 {
		// A wait is answered within its timeout and the server's own
		// bounds on what it does meanwhile: past that the daemon is
		// stuck, and the channel is taken as broken (the caller opens a
		// new one) rather than waited on for ever.
		_ = c.sock.SetReadDeadline(time.Now().Add(time.Duration(req.TimeoutMS)*time.Millisecond + c.slack))
		defer func() { _ = c.sock.SetReadDeadline(time.Time{}) }()
	}
	if _, err = c.w.Write(append(data, '\n')); err == nil {
		var line []byte
		if line, err = c.stdout.ReadBytes('\n'); err == nil {
			err = json.Unmarshal(line, &res)
		}
	}
	if err != nil {
		c.broken = fmt.Errorf("the helper %s failed: %w", HelperName, err)
		return Response{}, &DatabaseError{URL: c.url, Op: op, Err: c.broken}
	}
	if res.Kind != "" {
		return res, &DatabaseError{URL: c.url, Op: op, Err: errors.New(res.Err), Unknown: res.Kind == KindUnknown, transient: res.Kind == KindUnreachable}
	}
	return res, nil
}

// abort makes a call under way return (with an error) without waiting for
// its answer.
func (c *channel) abort() {
	if c.sock != nil {
		// Through SyscallConn, not Fd, which would put the socket back
		// in blocking mode and end its read deadlines.
		if rc, err := c.sock.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { _ = unix.Shutdown(int(fd), unix.SHUT_RDWR) })
		}
	}
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
}
