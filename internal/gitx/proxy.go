package gitx

// git:// without the 40 ms stalls.
//
// git's client for git:// remotes (git daemon) writes each request in
// several small writes on a socket without TCP_NODELAY, so Nagle's
// algorithm holds every small write after the first until the server
// acknowledges the first, and the server, waiting for the rest of the
// request, delays that acknowledgement (40 ms on Linux). A fetch with
// protocol v2 stalls once, a push once: measured on loopback, a fetch
// took 55 ms and a push 60 ms, and 15 ms and 22 ms through a relay that
// sets TCP_NODELAY. pickup pushes and fetches a shared board on every
// transition, so its git commands that talk to a remote run with
// core.gitProxy set to pickup itself, which relays the connection with
// TCP_NODELAY (Go sets it on every TCP connection).
//
// git consults core.gitProxy for git:// URLs only, and takes the first
// value that matches the host, reading the environment
// ($GIT_PROXY_COMMAND) and the config files before the command line: a
// proxy of the user's own always wins over pickup's.

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// ProxyEnv marks a process that git started as its core.gitProxy: with
// it set, pickup's executable run with a host and a port relays standard
// input and output to that address and does nothing else.
const ProxyEnv = "PICKUP_GIT_PROXY"

// remoteCommands are the git commands that may connect to a remote.
var remoteCommands = map[string]bool{"fetch": true, "push": true, "pull": true, "ls-remote": true, "clone": true}

// withProxy returns args and env for running git with the Repo's proxy:
// unchanged unless r.Proxy is set and the command talks to a remote.
func (r *Repo) withProxy(args, env []string) ([]string, []string) {
	if r.Proxy == "" || !remoteCommands[subcommand(args)] {
		return args, env
	}
	return append([]string{"-c", "core.gitProxy=" + r.Proxy}, args...), append(env, ProxyEnv+"=1")
}

// subcommand is git's command in args, after any -c options.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		if args[i] == "-c" {
			i++
			continue
		}
		return args[i]
	}
	return ""
}

// RunProxy relays when git started this executable as its core.gitProxy
// (args, a process's os.Args, are the executable, a host and a port, and
// getenv says ProxyEnv=1): no flag parsing, no board, nothing but the copy.
// It returns the relay's exit code with ok true, or ok false when this
// process is not a proxy. See internal/roles.
func RunProxy(args []string, getenv func(string) string) (code int, ok bool) {
	if len(args) != 3 || getenv(ProxyEnv) != "1" {
		return 0, false
	}
	port, err := strconv.ParseUint(args[2], 10, 16)
	if err != nil {
		return 0, false
	}
	var stall time.Duration
	if ms, err := strconv.ParseInt(getenv(StallEnv), 10, 64); err == nil && ms > 0 {
		stall = time.Duration(ms) * time.Millisecond
	}
	return relay(args[1], int(port), stall, os.Stdin, os.Stdout, os.Stderr), true
}

// relayStallMark is in the line the relay writes when it gives up a
// stalled connection (git passes its proxy's stderr on): RunIn reads it
// as ErrNetTimeout.
const relayStallMark = "no bytes moved for"

// stampWriter notes the time of every write that moves bytes.
type stampWriter struct {
	w    io.Writer
	last *atomic.Int64
}

func (s stampWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if n > 0 {
		s.last.Store(time.Now().UnixNano())
	}
	return n, err
}

// relay connects to host:port and copies in to the connection and the
// connection to out until the remote closes it. It returns the exit code.
//
// It uses the socket system calls, not package net: net would link the
// C library's resolver into pickup (a dynamically linked executable
// starts about a millisecond slower, and every pickup process pays it).
// A host that is not an address is resolved with getent(1), which asks
// the C library as git itself would.
//
// With stall > 0, a connection on which no byte moved either way for
// stall is given up (a remote that accepted the connection and stopped
// answering): the relay says so and exits, and git fails at once.
func relay(host string, port int, stall time.Duration, in io.Reader, out io.Writer, diag io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(diag, "pickup (git proxy): %s:%d: %v\n", host, port, err)
		return 1
	}
	addr, err := resolve(host)
	if err != nil {
		return fail(err)
	}
	conn, fd, err := dial(addr, port, stall)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	go func() {
		_, _ = io.Copy(stampWriter{conn, &last}, in)
		// git has said all it will: let the server see the end of input.
		_ = unix.Shutdown(fd, unix.SHUT_WR)
	}()
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(stampWriter{out, &last}, conn)
		copied <- err
	}()
	var tick <-chan time.Time
	if stall > 0 {
		t := time.NewTicker(min(stall/4, time.Second))
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case err := <-copied:
			if err != nil {
				return fail(err)
			}
			return 0
		case now := <-tick:
			if idle := now.Sub(time.Unix(0, last.Load())); idle >= stall {
				fmt.Fprintf(diag, "fatal: pickup (git proxy): %s:%d: %s %s: giving up (network_timeout)\n", host, port, relayStallMark, stall)
				return 1
			}
		}
	}
}

// resolve returns host's first address.
func resolve(host string) (netip.Addr, error) {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(h); err == nil {
		return a, nil
	}
	if h == "localhost" {
		return netip.AddrFrom4([4]byte{127, 0, 0, 1}), nil
	}
	outb, err := exec.Command("getent", "hosts", h).Output()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("resolve %s: getent hosts: %w", h, err)
	}
	for _, f := range strings.Fields(string(outb)) {
		if a, err := netip.ParseAddr(f); err == nil {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("resolve %s: no address", h)
}

// dial connects a TCP socket with TCP_NODELAY to addr:port, giving up
// after timeout (30 seconds if 0).
func dial(addr netip.Addr, port int, timeout time.Duration) (*os.File, int, error) {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	var sa unix.Sockaddr
	family := unix.AF_INET
	if addr.Is4() || addr.Is4In6() {
		sa = &unix.SockaddrInet4{Port: port, Addr: addr.Unmap().As4()}
	} else {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Port: port, Addr: addr.As16()}
	}
	// SOCK_CLOEXEC is Linux's; this process starts nothing after this.
	fd, err := unix.Socket(family, unix.SOCK_STREAM, unix.IPPROTO_TCP)
	if err != nil {
		return nil, -1, err
	}
	unix.CloseOnExec(fd)
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		unix.Close(fd)
		return nil, -1, err
	}
	// A blocking connect honours the send timeout.
	tv := unix.NsecToTimeval(int64(timeout))
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	for {
		err = unix.Connect(fd, sa)
		if err != unix.EINTR {
			break
		}
	}
	if err == unix.EINPROGRESS || err == unix.EAGAIN {
		err = fmt.Errorf("%s %s while connecting", relayStallMark, timeout)
	}
	if err != nil {
		unix.Close(fd)
		return nil, -1, err
	}
	var zero unix.Timeval
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &zero)
	return os.NewFile(uintptr(fd), "git remote"), fd, nil
}
