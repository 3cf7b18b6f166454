package gitx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// freePort is a port of 127.0.0.1 that nothing listens on (a connection
// to it is refused).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// gitDaemon serves base on port until the test ends.
func gitDaemon(t *testing.T, base string, port int) {
	t.Helper()
	exe := "/usr/lib/git-core/git-daemon"
	if _, err := os.Stat(exe); err != nil {
		exe = "git-daemon"
	}
	cmd := exec.Command(exe, "--reuseaddr", "--export-all", "--enable=receive-pack", "--listen=127.0.0.1",
		fmt.Sprintf("--port=%d", port), "--base-path="+base, base)
	if err := cmd.Start(); err != nil {
		t.Errorf("git daemon: %v", err)
		return
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
}

// TestRemoteRefusedRiddenOver: a git:// remote that refuses connections
// for a moment (its daemon restarting) costs a fetch and a push only the
// wait, through pickup's relay and without it; one that stays down fails
// with the remote's refusal once the network deadline is spent, and
// NotConnected says it reached nothing.
func TestRemoteRefusedRiddenOver(t *testing.T) {
	r := newRepo(t)
	base := t.TempDir()
	run(t, base, "init", "-q", "--bare", filepath.Join(base, "board.git"))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, proxy string }{{"git alone", ""}, {"through the relay", exe}} {
		t.Run(tc.name, func(t *testing.T) {
			port := freePort(t)
			url := fmt.Sprintf("git://127.0.0.1:%d/board.git", port)
			rr := *r
			rr.Proxy, rr.NetTimeout = tc.proxy, 2*time.Minute // room for a slow machine; the daemon is back in 1.5 s
			go func() {
				time.Sleep(1500 * time.Millisecond)
				gitDaemon(t, base, port)
			}()
			ctx := context.Background()
			start := time.Now()
			if _, err := rr.Run(ctx, "push", "--quiet", url, "HEAD:refs/heads/"+tc.name[:3]); err != nil {
				t.Fatalf("push while the daemon restarts: %v", err)
			}
			t.Logf("push landed after %s", time.Since(start).Round(time.Millisecond))
			if _, err := rr.Run(ctx, "fetch", "--quiet", url, "refs/heads/"+tc.name[:3]+":refs/x"); err != nil {
				t.Fatalf("fetch after: %v", err)
			}
		})
	}
	t.Run("down for good", func(t *testing.T) {
		rr := *r
		// Room for a git that takes a second or more to start and be
		// refused on a busy machine: the budget must outlast a try.
		rr.NetTimeout = 8 * time.Second
		url := fmt.Sprintf("git://127.0.0.1:%d/board.git", freePort(t))
		_, err := rr.Run(context.Background(), "fetch", "--quiet", url, "refs/heads/x:refs/x")
		if err == nil || !NotConnected(err) || errors.Is(err, ErrNetTimeout) {
			t.Fatalf("fetch from a remote that stays down: %v; want its refusal", err)
		}
	})
}

func TestNotConnected(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&Error{Code: 128, Stderr: "fatal: unable to connect to 127.0.0.1:\n127.0.0.1[0: 127.0.0.1]: errno=Connection refused\n"}, true},
		{&Error{Code: 128, Stderr: "pickup (git proxy): 127.0.0.1:9418: connect: connection refused\n"}, true},
		{&Error{Code: 128, Stderr: "fatal: unable to access 'http://x/': Failed to connect to x port 80: Couldn't connect to server\n"}, true},
		{&Error{Code: 128, Stderr: "fatal: the remote end hung up unexpectedly: Connection reset by peer\n"}, false}, // a push may have landed
		{&Error{Code: 1, Stderr: "! [rejected] main -> main (fetch first)\n"}, false},
		{&Error{Code: 128, Stderr: "fatal: '/x' does not appear to be a git repository\n"}, false},
		{&Error{Code: -1, Err: &NetTimeoutError{Limit: time.Second}, Stderr: "Connection refused"}, false},
		{errors.New("Connection refused"), false}, // not a git command's
	} {
		if got := NotConnected(tc.err); got != tc.want {
			t.Errorf("NotConnected(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
