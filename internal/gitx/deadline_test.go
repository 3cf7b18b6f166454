package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// silentListener accepts connections and never answers, as a dead VPN or
// a hung proxy does. It returns its port.
func silentListener(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().(*net.TCPAddr).Port
}

// TestRelayStall: the relay gives up a connection on which no byte moves
// for the stall bound, and says so in the words RunIn recognizes.
func TestRelayStall(t *testing.T) {
	port := silentListener(t)
	pr, pw, err := os.Pipe() // git's side: it has sent its request and waits
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	var out, diag bytes.Buffer
	start := time.Now()
	code := relay("127.0.0.1", port, 300*time.Millisecond, pr, &out, &diag)
	took := time.Since(start)
	if code == 0 || !strings.Contains(diag.String(), relayStallMark) {
		t.Fatalf("relay to a silent server: exit %d, said %q; want a failure naming the stall", code, diag.String())
	}
	// A relay without the bound waits for ever: a limit far above 300ms
	// tells the two apart however busy the machine is.
	if took > time.Minute {
		t.Fatalf("relay gave up after %s, want about 300ms", took)
	}
	t.Logf("relay gave up after %s (bound 300ms)", took.Round(time.Millisecond))
}

// TestRemoteCommandDeadline: a fetch from a git:// remote that accepts the
// connection and never answers ends with ErrNetTimeout, through the relay
// (the stall) and without it (the command's deadline, its process group
// killed), instead of waiting for ever.
func TestRemoteCommandDeadline(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	port := silentListener(t)
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("git://127.0.0.1:%d/board.git", port)
	for _, tc := range []struct {
		name    string
		proxy   string
		bound   time.Duration // the context's deadline; 0: none
		stalled bool
	}{
		{"relay sees the stall", exe, 20 * time.Second, true},
		{"git alone, killed at the deadline", "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Repo{Top: dir, GitDir: filepath.Join(dir, ".git"), CommonDir: filepath.Join(dir, ".git"), Proxy: tc.proxy, NetTimeout: time.Second}
			ctx := context.Background()
			if tc.bound > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.bound)
				defer cancel()
			}
			start := time.Now()
			_, err := r.Run(ctx, "fetch", "--quiet", url, "refs/heads/x:refs/x")
			took := time.Since(start)
			var te *NetTimeoutError
			if !errors.Is(err, ErrNetTimeout) || !errors.As(err, &te) {
				t.Fatalf("fetch from a silent remote: %v, want ErrNetTimeout", err)
			}
			if te.Stalled != tc.stalled {
				t.Fatalf("stalled = %v, want %v (%v)", te.Stalled, tc.stalled, err)
			}
			// A fetch without the deadline waits for ever: a limit far
			// above 1s tells the two apart however busy the machine is.
			if took > 1*time.Second+killGrace+time.Minute {
				t.Fatalf("fetch gave up after %s, want about 1s", took)
			}
			t.Logf("fetch gave up after %s (deadline 1s)", took.Round(time.Millisecond))
			var ge *Error
			if !errors.As(err, &ge) || !strings.Contains(ge.Summary(), "network_timeout") {
				t.Fatalf("summary %q does not say which setting gave up", ge.Summary())
			}
		})
	}
}
