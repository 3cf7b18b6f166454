package gitx

import (
	"bytes"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWithProxy(t *testing.T) {
	for _, tc := range []struct {
		name, proxy string
		args        []string
		want        bool
	}{
		{"fetch", "/bin/pickup", []string{"fetch", "--quiet", "origin"}, true},
		{"push", "/bin/pickup", []string{"push", "origin", "x:y"}, true},
		{"pull after -c", "/bin/pickup", []string{"-c", "merge.directoryRenames=false", "pull", "--rebase"}, true},
		{"ls-remote", "/bin/pickup", []string{"ls-remote", "origin"}, true},
		{"local command", "/bin/pickup", []string{"for-each-ref", "refs/pickup/"}, false},
		{"-c value named push", "/bin/pickup", []string{"-c", "push", "status"}, false},
		{"no proxy", "", []string{"fetch", "origin"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Repo{Proxy: tc.proxy}
			args, env := r.withProxy(slices.Clone(tc.args), []string{"GIT_INDEX_FILE=x"})
			got := len(args) == len(tc.args)+2 && args[0] == "-c" && args[1] == "core.gitProxy="+tc.proxy &&
				slices.Equal(args[2:], tc.args) && slices.Contains(env, ProxyEnv+"=1")
			if got != tc.want {
				t.Fatalf("withProxy(%q) = %q, env %q; want proxy %v", tc.args, args, env, tc.want)
			}
			if !tc.want && (!slices.Equal(args, tc.args) || len(env) != 1) {
				t.Fatalf("withProxy(%q) changed the command: %q, env %q", tc.args, args, env)
			}
		})
	}
}

// TestRelay: what git writes reaches the server, the end of git's input
// reaches it as the end of the stream (a server that reads to the end
// answers only then), and the server's answer reaches git.
func TestRelay(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	served := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		in, err := io.ReadAll(c)
		if err != nil {
			served <- err
			return
		}
		_, err = io.WriteString(c, "got:"+string(in))
		served <- err
	}()
	port := l.Addr().(*net.TCPAddr).Port
	var out, diag bytes.Buffer
	if code := relay("127.0.0.1", port, 0, strings.NewReader("0032git-upload-pack /board.git"), &out, &diag); code != 0 {
		t.Fatalf("relay exit %d: %s", code, diag.String())
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "got:0032git-upload-pack /board.git"; got != want {
		t.Fatalf("relayed %q, want %q", got, want)
	}
}

func TestRelayRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var out, diag bytes.Buffer
	if code := relay("127.0.0.1", port, 0, strings.NewReader("x"), &out, &diag); code == 0 || !strings.Contains(diag.String(), "git proxy") {
		t.Fatalf("relay to a closed port: exit %d, diag %q", code, diag.String())
	}
}

func TestResolve(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"127.0.0.1", "127.0.0.1"},
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"localhost", "127.0.0.1"},
	} {
		t.Run(tc.host, func(t *testing.T) {
			a, err := resolve(tc.host)
			if err != nil || a.String() != tc.want {
				t.Fatalf("resolve(%q) = %v, %v; want %s", tc.host, a, err, tc.want)
			}
		})
	}
	if _, err := resolve("no-such-host.invalid"); err == nil {
		t.Fatal("resolve of an .invalid name succeeded")
	}
}
