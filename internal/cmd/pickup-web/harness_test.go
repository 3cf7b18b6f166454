package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pickup-dev/pickup/internal/testbin"
	"github.com/pickup-dev/pickup/sessions"
)

// The tests start pickup-web as users do, a real process built without
// the race detector, and drive it with a real headless Chromium and real
// pickup commands: nothing is mocked.

var (
	pickupBin testbin.Once
	webOnce   sync.Once
	webBin    string
	webErr    error
	binOnce   sync.Once
	binDir    string
	binErr    error
)

// buildDir is where the test binaries are built, once for every test of
// the package: not a test's t.TempDir, which goes when that test ends.
func buildDir(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() { binDir, binErr = os.MkdirTemp("", "pickup-web-test") })
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binDir
}

// hang bounds a wait that catches a hang, counted from the last progress:
// generous enough for a machine many times slower than this one (this
// one has been seen at a load of 85 on 2 cores).
const hang = 3 * time.Minute

func webBinary(t *testing.T) string {
	t.Helper()
	webOnce.Do(func() {
		webBin = filepath.Join(buildDir(t), "pickup-web")
		out, err := exec.Command("go", "build", "-race=false", "-o", webBin, ".").CombinedOutput()
		if err != nil {
			webErr = fmt.Errorf("go build pickup-web: %v\n%s", err, out)
		}
	})
	if webErr != nil {
		t.Fatal(webErr)
	}
	return webBin
}

// pickupCmd runs the real pickup on dir's board, as another process.
func pickupCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(pickupBin.Path(t, buildDir(t)), args...)
	cmd.Env = append(os.Environ(), "PICKUP_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pickup %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newBoard makes a board and returns its directory.
func newBoard(t *testing.T) (string, *sessions.Board) {
	t.Helper()
	b, err := sessions.Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	return b.Dir, b
}

type webServer struct {
	cmd   *exec.Cmd
	URL   string // as printed, token included
	Base  string // http://host:port
	Token string
	Host  string // host:port
	done  chan struct{}
}

var printed = regexp.MustCompile(`at (http://([^/ ]+))/(\?token=([0-9a-zA-Z]+))? \(`)

// startServer starts pickup-web on dir's board on a free loopback port.
func startServer(t *testing.T, dir string, args ...string) *webServer {
	t.Helper()
	return startServerAt(t, dir, "127.0.0.1:0", "", args...)
}

// startServerAt starts pickup-web on dir's board at addr, with env (one
// VAR=value, or "") added to its environment.
func startServerAt(t *testing.T, dir, addr, env string, args ...string) *webServer {
	t.Helper()
	var full []string
	if env != "" {
		full = append(os.Environ(), env)
	}
	return startServerEnv(t, dir, addr, full, "", args...)
}

// startServerEnv starts pickup-web on dir's board at addr, with the
// environment env (nil: this process's) in the folder cwd ("": this
// process's).
func startServerEnv(t *testing.T, dir, addr string, env []string, cwd string, args ...string) *webServer {
	t.Helper()
	cmd := exec.Command(webBinary(t), append([]string{"--dir", dir, "--addr", addr}, args...)...)
	cmd.Env, cmd.Dir = env, cwd
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &webServer{cmd: cmd, done: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, r)
	}()
	go func() { _ = cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { s.stop(t) })
	select {
	case line := <-lines:
		m := printed.FindStringSubmatch(line)
		if m == nil {
			<-s.done
			t.Fatalf("pickup-web printed %q, stderr %q", line, stderr.String())
		}
		s.URL, s.Base, s.Host, s.Token = m[1]+"/"+m[3], m[1], m[2], m[4]
	case <-time.After(hang):
		t.Fatalf("pickup-web did not say where it listens within %s", hang)
	}
	return s
}

func (s *webServer) stop(t *testing.T) {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(hang):
		_ = s.cmd.Process.Kill()
		<-s.done
		t.Errorf("pickup-web did not stop on SIGTERM within %s", hang)
	}
}

// cpuTicks is the process's user and system time, in clock ticks.
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return u + s
}

// chromium is Debian's, unless $PICKUP_CHROMIUM names another;
// PICKUP_SKIP_BROWSER=1 skips the browser tests on purpose.
func chromium(t *testing.T) string {
	t.Helper()
	if os.Getenv("PICKUP_SKIP_BROWSER") == "1" {
		t.Skip("PICKUP_SKIP_BROWSER=1: the browser tests are skipped on purpose")
	}
	p := os.Getenv("PICKUP_CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no Chromium at %s: install Debian's (apt-get install chromium; scripts/test does), name one with PICKUP_CHROMIUM, or skip on purpose with PICKUP_SKIP_BROWSER=1", p)
	}
	return p
}

// browser starts a headless Chromium with a fresh profile; tabs are made
// from the returned context with chromedp.NewContext.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-features", "IsolateOrigins,site-per-process"),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	// The browser starts with its first tab.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// tab shows url in the browser's tab, with a viewport width wide and the
// page's first rendering in place. (chromedp v0.23.0 hangs navigating a
// second tab that it made itself; more pages are opened from this one
// with window.open, see openMore.)
func tab(t *testing.T, bctx context.Context, url string, width int) context.Context {
	t.Helper()
	do(t, bctx, chromedp.EmulateViewport(int64(width), 900), chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("#board")))
	return bctx
}

// openMore opens n more pages of url from page (window.__pages), each a
// page of its own with its own stream, and waits until all are live.
func openMore(t *testing.T, page context.Context, url string, n int) {
	t.Helper()
	eval[bool](t, page, fmt.Sprintf(`(() => { window.__pages = []; for (let i = 0; i < %d; i++) window.__pages.push(window.open(%q, "_blank")); return true })()`, n, url))
	waitCount(t, page, "pages live", `window.__pages.filter(w => w.document && w.document.getElementById("live") && w.document.getElementById("live").textContent === "live").length`, n)
}

// waitCount waits until js counts want, failing only when the count has not
// grown for the hang bound (a slow machine opens 50 pages slowly, and
// that is not a hang).
func waitCount(t *testing.T, page context.Context, what, js string, want int) {
	t.Helper()
	last, since := -1, time.Now()
	for {
		got := eval[int](t, page, js)
		if got >= want {
			return
		}
		if got > last {
			last, since = got, time.Now()
		} else if time.Since(since) > hang {
			t.Fatalf("%s: %d of %d, none more for %s", what, got, want, hang)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// do runs actions with the hang bound.
func do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, hang)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatalf("chromium: %v", err)
	}
}

// eval evaluates js on the page.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, hang)
	defer cancel()
	out, err := chromedp.Run(c, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("chromium: evaluate %s: %v", js, err)
	}
	return out
}

// waitFor waits until js is true on the page, within the hang bound.
func waitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, hang)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Poll[bool](js, chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(0))); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
