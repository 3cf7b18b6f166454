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
	"io"
	"net"
	"os"
	"strconv"
	"time"
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
	if _, err := strconv.ParseUint(os.Args[2], 10, 16); err != nil {
		return
	}
	os.Exit(relay(os.Args[1], os.Args[2], os.Stdin, os.Stdout, os.Stderr))
}

// relay connects to host:port and copies in to the connection and the
// connection to out until the remote closes it. It returns the exit code.
func relay(host, port string, in io.Reader, out io.Writer, diag io.Writer) int {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), 30*time.Second)
	if err != nil {
		io.WriteString(diag, "pickup (git proxy): "+err.Error()+"\n")
		return 1
	}
	defer conn.Close()
	go func() {
		_, _ = io.Copy(conn, in)
		// git has said all it will: let the server see the end of input.
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	if _, err := io.Copy(out, conn); err != nil {
		io.WriteString(diag, "pickup (git proxy): "+err.Error()+"\n")
		return 1
	}
	return 0
}
