package main

// Measurements of waiting and working: `pickup next --wait` woken by
// `pickup new`, and an idle waiter's CPU (work.go: `pickup work` draining a board).
// They register themselves (init below), so main.go needs no change.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pickup-dev/pickup/internal/benchkit"
	"github.com/pickup-dev/pickup/sessions"
)

var (
	idleWindow time.Duration
	workN      int
	workJobs   int
)

func init() {
	flag.DurationVar(&idleWindow, "wait-idle", 10*time.Second, "how long wait-idle-cpu watches an idle pickup next --wait")
	flag.IntVar(&workN, "work", 2000, "sessions pickup work drains in work-drain")
	flag.IntVar(&workJobs, "work-jobs", 8, "-j of pickup work in work-drain")
	measurements = append(measurements,
		measurement{"wait-latency", func(e *env) (Row, error) { return waitLatency(e, false) }},
		measurement{"wait-latency-nosync", func(e *env) (Row, error) { return waitLatency(e, true) }},
		measurement{"wait-idle-cpu", waitIdleCPU},
		measurement{"work-drain", func(e *env) (Row, error) { return workDrain(e, false) }},
		measurement{"work-drain-nosync", func(e *env) (Row, error) { return workDrain(e, true) }},
	)
}

// childEnv is the driver's environment without PICKUP_* variables.
func childEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PICKUP_") })
}

// waiter is a running `pickup next --wait` process.
type waiter struct {
	cmd     *exec.Cmd
	stderr  *bytes.Buffer
	line    chan lineAt   // its first stdout line, when it came
	drained chan struct{} // closed when stdout is read to its end
}

type lineAt struct {
	text string
	at   time.Time
	err  error
}

// startWaiter starts `pickup --dir dir --owner owner next --wait=wait --json`
// and reads its first stdout line in the background, stamping the moment
// the driver has it.
func startWaiter(e *env, dir, owner string, wait time.Duration, noSync bool) (*waiter, error) {
	args := []string{"--dir", dir, "--owner", owner, "--json", "next", "--wait=" + wait.String()}
	if noSync {
		args = append(args, "--no-sync")
	}
	cmd := exec.Command(e.bin, args...)
	cmd.Env = childEnv()
	w := &waiter{cmd: cmd, stderr: &bytes.Buffer{}, line: make(chan lineAt, 1), drained: make(chan struct{})}
	cmd.Stderr = w.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(w.drained)
		r := bufio.NewReader(out)
		text, err := r.ReadString('\n')
		w.line <- lineAt{text, time.Now(), err}
		_, _ = io.Copy(io.Discard, r)
	}()
	return w, nil
}

// wait waits for the waiter to exit and returns its exit code and CPU time.
func (w *waiter) wait() (int, time.Duration, error) {
	<-w.drained // Wait closes the pipe: read it to the end first
	err := w.cmd.Wait()
	var cpu time.Duration
	if ru, ok := w.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return -1, cpu, err
	}
	return w.cmd.ProcessState.ExitCode(), cpu, nil
}

// --- 4a. new -> an idle next --wait has claimed it ---------------------------

// waitLatency times, over e.trials trials, how long after `pickup new`
// exits an idle `pickup next --wait --json` process has claimed the new
// session. "Claimed" is taken as the moment the driver reads the waiter's
// JSON line, which the waiter prints only after the rename into
// doing/<owner>/ (and, with fsync, the fsync of both directories) and a read
// of the claimed file: an upper bound of the claim itself. Each trial checks
// that the line names the new session and that the file is in
// doing/<owner>/. Negative figures mean the waiter printed before new had
// exited (new's exit includes its own fsyncs and process teardown). The
// figures from new's start are given too (what a script that runs
// `pickup new` sees end to end), and from the moment the driver's own
// inotify watch saw the file arrive in todo/ (the waiter's wake-up, claim
// and output, independent of how long new takes to exit).
func waitLatency(e *env, noSync bool) (Row, error) {
	mode := syncLabel(noSync)
	row := Row{
		What:   fmt.Sprintf("pickup new exits -> idle pickup next --wait process has claimed it (its JSON line read), %s, %d trials", mode, e.trials),
		Target: "median <= 5ms, p99 <= 50ms",
	}
	b, err := benchkit.NewBoard(e.dir("wait-latency"))
	if err != nil {
		return row, err
	}
	defer e.remove(b.Dir)
	const owner = "bench-waiter"
	newArgs := []string{"--dir", b.Dir, "new", "--title", "wake up"}
	if noSync {
		newArgs = append(newArgs, "--no-sync")
	}
	trial := func() (fromExit, fromStart, fromArrival time.Duration, err error) {
		w, err := startWaiter(e, b.Dir, owner, time.Minute, noSync)
		if err != nil {
			return 0, 0, 0, err
		}
		defer func() {
			if w.cmd.ProcessState == nil {
				_ = w.cmd.Process.Kill()
				_, _, _ = w.wait()
			}
		}()
		if err := waitIdle(w.cmd.Process.Pid); err != nil {
			return 0, 0, 0, err
		}
		arrived, stopWatch, err := watchArrival(b.StateDir(sessions.Todo, ""))
		if err != nil {
			return 0, 0, 0, err
		}
		defer stopWatch()
		nc := exec.Command(e.bin, newArgs...)
		nc.Env = childEnv()
		var out, errOut bytes.Buffer
		nc.Stdout, nc.Stderr = &out, &errOut
		start := time.Now()
		if err := nc.Run(); err != nil {
			return 0, 0, 0, fmt.Errorf("pickup new: %v: %s", err, errOut.String())
		}
		exited := time.Now()
		id := strings.TrimSpace(out.String())
		var l lineAt
		select {
		case l = <-w.line:
		case <-time.After(30 * time.Second):
			return 0, 0, 0, fmt.Errorf("the waiter did not claim %s within 30s", id)
		}
		if l.err != nil {
			code, _, _ := w.wait()
			return 0, 0, 0, fmt.Errorf("waiter output: %v (exit %d): %s", l.err, code, w.stderr.String())
		}
		var got struct{ ID, State, Owner string }
		if err := json.Unmarshal([]byte(l.text), &got); err != nil {
			return 0, 0, 0, fmt.Errorf("waiter output %q: %v", l.text, err)
		}
		if got.ID != id || got.State != "doing" || got.Owner != owner {
			return 0, 0, 0, fmt.Errorf("waiter claimed %+v, want %s", got, id)
		}
		if _, err := os.Lstat(b.Path(sessions.Doing, owner, id)); err != nil {
			return 0, 0, 0, fmt.Errorf("after the waiter's line: %v", err)
		}
		if code, _, err := w.wait(); err != nil || code != 0 {
			return 0, 0, 0, fmt.Errorf("waiter exit %d, %v: %s", code, err, w.stderr.String())
		}
		// Out of the way, untimed: the next waiter finds an empty todo/.
		if err := os.Rename(b.Path(sessions.Doing, owner, id), b.Path(sessions.Done, "", id)); err != nil {
			return 0, 0, 0, err
		}
		var arrival time.Duration
		select {
		case at := <-arrived:
			arrival = l.at.Sub(at)
		case <-time.After(5 * time.Second):
			return 0, 0, 0, fmt.Errorf("the driver's own watch never saw %s arrive in todo/", id)
		}
		return l.at.Sub(exited), l.at.Sub(start), arrival, nil
	}
	for i := 0; i < 3; i++ { // warm the binary and the page cache
		if _, _, _, err := trial(); err != nil {
			return row, err
		}
	}
	exits := make([]time.Duration, e.trials)
	starts := make([]time.Duration, e.trials)
	arrivals := make([]time.Duration, e.trials)
	for i := range exits {
		if exits[i], starts[i], arrivals[i], err = trial(); err != nil {
			return row, err
		}
	}
	slices.Sort(exits)
	slices.Sort(starts)
	slices.Sort(arrivals)
	med, p99 := percentile(exits, 0.5), percentile(exits, 0.99)
	row.Figure = fmt.Sprintf("median %s, p90 %s, p99 %s (min %s, max %s); from the file's arrival in todo/: median %s, p99 %s; from new's start: median %s, p99 %s",
		signedMs(med), signedMs(percentile(exits, 0.9)), signedMs(p99), signedMs(exits[0]), signedMs(exits[len(exits)-1]),
		signedMs(percentile(arrivals, 0.5)), signedMs(percentile(arrivals, 0.99)),
		ms(percentile(starts, 0.5)), ms(percentile(starts, 0.99)))
	row.Result = passIf(med <= 5*time.Millisecond && p99 <= 50*time.Millisecond)
	return row, nil
}

// watchArrival watches dir with inotify and sends the time of the first
// session file that arrives in it: when `pickup new` renamed it into
// place, as far as the driver can see.
func watchArrival(dir string) (<-chan time.Time, func(), error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, nil, err
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, nil, err
	}
	out := make(chan time.Time, 1)
	go func() {
		for ev := range w.Events {
			if _, ok := sessions.IsSessionName(filepath.Base(ev.Name)); ok && ev.Has(fsnotify.Create) {
				out <- time.Now()
				break
			}
		}
		for range w.Events { // until closed
		}
	}()
	go func() {
		for range w.Errors {
		}
	}()
	return out, func() { w.Close() }, nil
}

func signedMs(d time.Duration) string {
	if d < 0 {
		return "-" + ms(-d)
	}
	return ms(d)
}

// --- 4b. an idle waiter's CPU ------------------------------------------------

// waitIdleCPU starts `pickup next --wait` on an empty board, waits until it
// blocks, and reads its CPU time (/proc/PID/stat, 10 ms ticks) at the start
// and at the end of idleWindow; its safety rescans (every 5 s) fall in the
// window. The whole process's CPU (rusage, start-up included) is given too.
func waitIdleCPU(e *env) (Row, error) {
	row := Row{
		What:   fmt.Sprintf("idle pickup next --wait, CPU over %s, fsync on (it writes nothing while idle)", idleWindow),
		Target: "< 1% of a core",
	}
	b, err := benchkit.NewBoard(e.dir("wait-idle"))
	if err != nil {
		return row, err
	}
	defer e.remove(b.Dir)
	w, err := startWaiter(e, b.Dir, "bench-idle", idleWindow+2*time.Second, false)
	if err != nil {
		return row, err
	}
	pid := w.cmd.Process.Pid
	if err := waitIdle(pid); err != nil {
		_ = w.cmd.Process.Kill()
		_, _, _ = w.wait()
		return row, err
	}
	before, err := procCPU(pid)
	if err != nil {
		return row, err
	}
	t0 := time.Now()
	time.Sleep(idleWindow)
	after, err := procCPU(pid)
	if err != nil {
		return row, err
	}
	window := time.Since(t0)
	code, total, err := w.wait()
	if err != nil {
		return row, err
	}
	if code != 3 { // nothing to claim: the timeout
		return row, fmt.Errorf("the idle waiter exited %d, want 3: %s", code, w.stderr.String())
	}
	idle := after - before
	share := float64(idle) / float64(window) * 100
	row.Figure = fmt.Sprintf("%.2f%% of a core (%s of CPU in %s, clock ticks of 10ms); whole process %s of CPU",
		share, ms(idle), ms(window), ms(total))
	row.Result = passIf(share < 1)
	return row, nil
}
