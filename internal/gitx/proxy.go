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

// The relay runs before main when git started this executable as its
// proxy: no flag parsing, no board, nothing but the copy.
func init() {
	if len(os.Args) != 3 || os.Getenv(ProxyEnv) != "1" {
		return
	}
	port, err := strconv.ParseUint(os.Args[2], 10, 16)
	if err != nil {
		return
	}
	os.Exit(relay(os.Args[1], int(port), os.Stdin, os.Stdout, os.Stderr))
}

// relay connects to host:port and copies in to the connection and the
// connection to out until the remote closes it. It returns the exit code.
//
// It uses the socket system calls, not package net: net would link the
// C library's resolver into pickup (a dynamically linked executable
// starts about a millisecond slower, and every pickup process pays it).
// A host that is not an address is resolved with getent(1), which asks
// the C library as git itself would.
func relay(host string, port int, in io.Reader, out io.Writer, diag io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(diag, "pickup (git proxy): %s:%d: %v\n", host, port, err)
		return 1
	}
	addr, err := resolve(host)
	if err != nil {
		return fail(err)
	}
	conn, fd, err := dial(addr, port)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	go func() {
		_, _ = io.Copy(conn, in)
		// git has said all it will: let the server see the end of input.
		_ = unix.Shutdown(fd, unix.SHUT_WR)
	}()
	if _, err := io.Copy(out, conn); err != nil {
		return fail(err)
	}
	return 0
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
// after 30 seconds.
func dial(addr netip.Addr, port int) (*os.File, int, error) {
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
	tv := unix.NsecToTimeval(int64(30 * time.Second))
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	for {
		err = unix.Connect(fd, sa)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, -1, err
	}
	var zero unix.Timeval
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &zero)
	return os.NewFile(uintptr(fd), "git remote"), fd, nil
}
