package main

import (
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable time for the filter.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// feed runs events through a new filter, advancing the clock by the
// "after" of each, and returns what it printed.
type step struct {
	after time.Duration
	ev    event
	tick  bool // call tick instead of sending ev
}

func feed(t *testing.T, steps []step, finish bool) string {
	t.Helper()
	c := &clock{t: time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)}
	var out strings.Builder
	f := newFilter(&out, c.now)
	for _, s := range steps {
		c.t = c.t.Add(s.after)
		if s.tick {
			f.tick()
			continue
		}
		b, err := json.Marshal(s.ev)
		if err != nil {
			t.Fatal(err)
		}
		f.line(b)
	}
	if finish {
		f.finish()
	}
	return out.String()
}

const pkgA = "github.com/pickup-dev/pickup/claim"

func out(pkg, test, text string) step {
	return step{ev: event{Action: "output", Package: pkg, Test: test, Output: text}}
}

func TestFilter(t *testing.T) {
	for _, c := range []struct {
		name    string
		steps   []step
		finish  bool
		want    []string // lines that must appear, in this order
		notWant []string
	}{
		{
			name: "a line per package with its time",
			steps: []step{
				{ev: event{Action: "start", Package: pkgA}},
				out(pkgA, "TestOK", "=== RUN   TestOK\n"),
				out(pkgA, "TestOK", "chatter of a passing test\n"),
				{ev: event{Action: "pass", Package: pkgA, Test: "TestOK"}},
				out(pkgA, "", "ok  \tgithub.com/pickup-dev/pickup/claim\t12.3s\n"),
				{ev: event{Action: "pass", Package: pkgA, Elapsed: 12.34}},
				{ev: event{Action: "skip", Package: "github.com/pickup-dev/pickup/internal/cmd/bench"}},
			},
			finish:  true,
			want:    []string{"ok    claim", "12.3s\n", "-     internal/cmd/bench", "no tests", "1 package(s) passed, 0 failed, 1 without tests"},
			notWant: []string{"chatter", "=== RUN"},
		},
		{
			name: "a failed test prints its whole output once, subtests included",
			steps: []step{
				out(pkgA, "TestBad", "=== RUN   TestBad\n"),
				out(pkgA, "TestBad", "    bad_test.go:4: some log\n"),
				out(pkgA, "TestBad/sub", "    bad_test.go:5: boom\n"),
				{ev: event{Action: "fail", Package: pkgA, Test: "TestBad/sub"}},
				out(pkgA, "TestBad/fine", "--- PASS: TestBad/fine (0.00s)\n"),
				{ev: event{Action: "pass", Package: pkgA, Test: "TestBad/fine"}},
				out(pkgA, "TestBad", "--- FAIL: TestBad (0.00s)\n"),
				{ev: event{Action: "fail", Package: pkgA, Test: "TestBad"}},
				out(pkgA, "TestOther", "other chatter\n"),
				{ev: event{Action: "pass", Package: pkgA, Test: "TestOther"}},
				out(pkgA, "", "FAIL\n"),
				out(pkgA, "", "FAIL\tgithub.com/pickup-dev/pickup/claim\t0.5s\n"),
				{ev: event{Action: "fail", Package: pkgA, Elapsed: 0.5}},
			},
			finish: true,
			want: []string{"--- claim TestBad failed; its output:\n=== RUN   TestBad\n    bad_test.go:4: some log\n    bad_test.go:5: boom\n--- PASS: TestBad/fine (0.00s)\n--- FAIL: TestBad (0.00s)\n",
				"FAIL  claim", "0 package(s) passed, 1 failed", "failed: claim"},
			notWant: []string{"other chatter", "outside a finished test", "FAIL\tgithub.com"},
		},
		{
			name: "a timeout prints the unfinished test and the panic",
			steps: []step{
				out(pkgA, "TestDone", "done chatter\n"),
				{ev: event{Action: "pass", Package: pkgA, Test: "TestDone"}},
				out(pkgA, "TestSlow", "=== RUN   TestSlow\n"),
				out(pkgA, "TestSlow/inner", "    slow_test.go:3: before sleep\n"),
				out(pkgA, "", "panic: test timed out after 3s\n"),
				{ev: event{Action: "fail", Package: pkgA, Elapsed: 3}},
			},
			want:    []string{"--- claim failed outside a finished test; its output:\n=== RUN   TestSlow\n    slow_test.go:3: before sleep\npanic: test timed out after 3s\n", "FAIL  claim", "3.0s"},
			notWant: []string{"done chatter"},
		},
		{
			name: "a build failure prints the compiler's errors",
			steps: []step{
				{ev: event{Action: "build-output", ImportPath: pkgA + " [" + pkgA + ".test]", Output: "claim/x.go:2:23: cannot use \"s\"\n"}},
				{ev: event{Action: "build-fail", ImportPath: pkgA + " [" + pkgA + ".test]"}},
				{ev: event{Action: "start", Package: pkgA}},
				out(pkgA, "", "FAIL\tgithub.com/pickup-dev/pickup/claim [build failed]\n"),
				{ev: event{Action: "fail", Package: pkgA, FailedBuild: pkgA + " [" + pkgA + ".test]"}},
			},
			want: []string{"claim/x.go:2:23: cannot use \"s\"\n", "FAIL  claim"},
		},
		{
			name: "a slow package names its slowest top-level tests, slowest first",
			steps: []step{
				{ev: event{Action: "pass", Package: pkgA, Test: "TestA", Elapsed: 3}},
				{ev: event{Action: "pass", Package: pkgA, Test: "TestB/sub", Elapsed: 90}},
				{ev: event{Action: "pass", Package: pkgA, Test: "TestB", Elapsed: 95}},
				{ev: event{Action: "fail", Package: pkgA, Test: "TestC", Elapsed: 40}},
				{ev: event{Action: "pass", Package: pkgA, Test: "TestD", Elapsed: 1}},
				{ev: event{Action: "pass", Package: pkgA, Test: "TestE", Elapsed: 2}},
				{ev: event{Action: "skip", Package: pkgA, Test: "TestF", Elapsed: 0}},
				{ev: event{Action: "fail", Package: pkgA, Elapsed: 140}},
				{ev: event{Action: "pass", Package: "github.com/pickup-dev/pickup/sessions", Test: "TestQuick", Elapsed: 29}},
				{ev: event{Action: "pass", Package: "github.com/pickup-dev/pickup/sessions", Elapsed: 29.5}},
			},
			want:    []string{"FAIL  claim", "2m20s (slowest: TestB 1m35s, TestC 40.0s, TestA 3.0s, TestE 2.0s, TestD 1.0s)\n", "ok    sessions", "29.5s\n"},
			notWant: []string{"TestB/sub", "TestF", "TestQuick"},
		},
		{
			name: "running packages are named with their time at each tick",
			steps: []step{
				{tick: true},
				{ev: event{Action: "start", Package: pkgA}},
				{after: 10 * time.Second, ev: event{Action: "start", Package: "github.com/pickup-dev/pickup"}},
				{after: 25 * time.Second, tick: true},
				{after: 30 * time.Second, ev: event{Action: "pass", Package: pkgA, Elapsed: 65}},
				{after: 5 * time.Second, tick: true},
			},
			want: []string{"35.0s in: still running claim (35.0s), . (25.0s)\n", "ok    claim", "1m10s in: still running . (1m0s)\n"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := feed(t, c.steps, c.finish)
			rest := got
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q (in order); output:\n%s", w, got)
				}
				rest = rest[i+len(w):]
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("output holds %q; output:\n%s", w, got)
				}
			}
		})
	}
}

func TestTickIdle(t *testing.T) {
	got := feed(t, []step{{after: 30 * time.Second, tick: true}}, false)
	if want := "      30.0s in: building test binaries (none running yet)\n"; got != want {
		t.Fatalf("a tick with nothing running printed %q, want %q", got, want)
	}
}

func TestPassThrough(t *testing.T) {
	var out strings.Builder
	f := newFilter(&out, time.Now)
	f.line([]byte("go: downloading example.com/x v1.0.0"))
	if got := out.String(); got != "go: downloading example.com/x v1.0.0\n" {
		t.Fatalf("got %q", got)
	}
}

// TestRun drives the whole filter through run: the input's end prints the
// summary and returns nil, and a tick fires while input is slow.
func TestRun(t *testing.T) {
	r, w := ioPipe()
	var out syncBuilder
	f := newFilter(&out, time.Now)
	done := make(chan error, 1)
	go func() { done <- run(f, r, 20*time.Millisecond) }()
	w.write(`{"Action":"start","Package":"p"}` + "\n")
	waitFor(t, &out, "still running p")
	w.write(`{"Action":"pass","Package":"p","Elapsed":1.5}` + "\n")
	w.close()
	if err := <-done; err != nil {
		t.Fatalf("run = %v", err)
	}
	if s := out.String(); !strings.Contains(s, "ok    p") || !strings.Contains(s, "1 package(s) passed") {
		t.Fatalf("output:\n%s", s)
	}
}

type pipeWriter struct{ w *io.PipeWriter }

func (p pipeWriter) write(s string) { _, _ = p.w.Write([]byte(s)) }
func (p pipeWriter) close()         { _ = p.w.Close() }

func ioPipe() (io.Reader, pipeWriter) {
	r, w := io.Pipe()
	return r, pipeWriter{w}
}

// syncBuilder is a strings.Builder safe for the filter's goroutine and the
// test's.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits up to 10 s for out to hold want.
func waitFor(t *testing.T, out *syncBuilder, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if strings.Contains(out.String(), want) {
			return
		}
	}
	t.Fatalf("no %q in 10s; output:\n%s", want, out.String())
}
