package boardways

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/benchkit"
	"github.com/pickup-dev/pickup/sessions"
)

// Measurements of the live board in a real terminal (tmux), reported as
// benchmark metrics, never asserted:
//
//	go test -run '^$' -bench . -benchtime 5x ./internal/e2e/boardways
//
// BenchmarkBoardStart/floor is an empty Go program that switches to the
// alternate screen and prints one line, started and read the same way: the
// cost of tmux and of polling capture-pane, beside which the board's start
// is given; /bubbletea-floor is the smallest bubbletea program doing the
// same (testdata/teafloor): what the terminal library costs by itself.

// benchBoard makes a board of n sessions: half waiting, ten held by five
// owners, the rest done, with an event log of a line per done session.
func benchBoard(b *testing.B, n int) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "board")
	bd, err := benchkit.NewBoard(dir)
	if err != nil {
		b.Fatal(err)
	}
	todo, held := n/2, 10
	if _, err := benchkit.Fill(bd, sessions.Todo, "", 0, todo); err != nil {
		b.Fatal(err)
	}
	for o := range 5 {
		if _, err := benchkit.Fill(bd, sessions.Doing, fmt.Sprintf("agent-%d", o), todo+2*o, held/5); err != nil {
			b.Fatal(err)
		}
	}
	ids, err := benchkit.Fill(bd, sessions.Done, "", todo+held, n-todo-held)
	if err != nil {
		b.Fatal(err)
	}
	log, err := os.Create(bd.EventLogPath())
	if err != nil {
		b.Fatal(err)
	}
	enc := json.NewEncoder(log)
	start := time.Now().Add(-time.Duration(len(ids)) * time.Second)
	for i, id := range ids {
		_ = enc.Encode(sessions.Event{Time: start.Add(time.Duration(i) * time.Second), ID: id, Op: "done", From: "doing/agent-0", To: "done", Owner: "agent-0"})
	}
	if err := log.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// floorProgram builds the floor: a Go program that shows one screen.
func floorProgram(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	src := "package main\n\nimport (\n\t\"fmt\"\n\t\"time\"\n)\n\nfunc main() {\n\tfmt.Print(\"\\x1b[?1049h\\x1b[Hfloor  q quit\")\n\ttime.Sleep(time.Minute)\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module floor\n\ngo 1.22\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", "floor", ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build the floor: %v\n%s", err, out)
	}
	return filepath.Join(dir, "floor")
}

// BenchmarkBoardStart: from starting pickup board in a fresh terminal to
// its first full screen (the counts and the last line drawn).
func BenchmarkBoardStart(b *testing.B) {
	bin := binDir(b)
	b.Run("floor", func(b *testing.B) {
		floor := floorProgram(b)
		startLoop(b, env(bin, b.TempDir()), "exec "+floor, "q quit")
	})
	b.Run("bubbletea-floor", func(b *testing.B) {
		floor := filepath.Join(b.TempDir(), "teafloor")
		if out, err := exec.Command("go", "build", "-o", floor, "./testdata/teafloor").CombinedOutput(); err != nil {
			b.Fatalf("build teafloor: %v\n%s", err, out)
		}
		startLoop(b, env(bin, b.TempDir()), "exec "+floor, "q quit")
	})
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := benchBoard(b, n)
			startLoop(b, env(bin, dir), "exec pickup board", fmt.Sprintf("%d todo", n/2), "q quit")
		})
	}
}

func startLoop(b *testing.B, e []string, cmd string, want ...string) {
	var total time.Duration
	cpu := 0
	for b.Loop() {
		start := time.Now()
		tm := newTerm(b, e, 120, 40, cmd)
		tm.poll = 2 * time.Millisecond
		tm.waitFor("the first screen", 30*time.Second, func(s string) bool {
			for _, w := range want {
				if !strings.Contains(s, w) {
					return false
				}
			}
			return true
		})
		total += time.Since(start)
		// On a loaded machine the wall time is mostly waiting for a CPU:
		// the CPU time the program used up to its first screen says what
		// it costs.
		cpu += cpuTicks(b, tm.panePID())
		_ = exec.Command("tmux", "-L", tm.socket, "kill-server").Run()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/first-screen")
	b.ReportMetric(float64(cpu)*10/float64(b.N), "cpu-ms/first-screen")
}

// BenchmarkClaimShows: from pickup claim returning to the claim on the
// screen of a running board (100 sessions).
func BenchmarkClaimShows(b *testing.B) {
	bin := binDir(b)
	dir := benchBoard(b, 100)
	e := env(bin, dir)
	tm := newTerm(b, e, 120, 40, "exec pickup board")
	tm.poll = time.Millisecond
	tm.waitFor("the board", 30*time.Second, func(s string) bool { return strings.Contains(s, "q quit") })
	pickup := func(args ...string) {
		cmd := exec.Command(filepath.Join(bin, "pickup"), args...)
		cmd.Env = append(e, "PICKUP_OWNER=bench")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("pickup %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	var total time.Duration
	i := 0
	for b.Loop() {
		id := benchkit.ID(i)
		i++
		pickup("claim", id)
		start := time.Now()
		tm.waitFor("the claim", 10*time.Second, func(s string) bool { return strings.Contains(s, "└ "+id) })
		total += time.Since(start)
		b.StopTimer()
		pickup("release", id)
		tm.waitFor("the release", 10*time.Second, func(s string) bool { return !strings.Contains(s, "└ "+id) })
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/claim-shown")
}

// BenchmarkIdle: the board's CPU time over a minute in which nothing
// happens, once its last update is over 10 s old, and its memory (board of
// 10,000 sessions). Run it with -benchtime 1x: each run takes 75 s.
func BenchmarkIdle(b *testing.B) {
	bin := binDir(b)
	dir := benchBoard(b, 10000)
	for b.Loop() {
		tm := newTerm(b, env(bin, dir), 120, 40, "exec pickup board")
		tm.waitFor("the board", 30*time.Second, func(s string) bool { return strings.Contains(s, "q quit") })
		pid := childNamed(b, tm.panePID(), "pickup-board")
		time.Sleep(12 * time.Second)
		before := cpuTicks(b, pid)
		time.Sleep(time.Minute)
		b.ReportMetric(float64(cpuTicks(b, pid)-before), "ticks/idle-minute")
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		for _, l := range strings.Split(string(status), "\n") {
			var kb float64
			if _, err := fmt.Sscanf(l, "VmRSS: %f kB", &kb); err == nil {
				b.ReportMetric(kb/1024, "MiB-rss")
			}
			if _, err := fmt.Sscanf(l, "VmHWM: %f kB", &kb); err == nil {
				b.ReportMetric(kb/1024, "MiB-peak-rss")
			}
		}
		_ = exec.Command("tmux", "-L", tm.socket, "kill-server").Run()
	}
}
