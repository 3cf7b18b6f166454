package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// The tests of `pickup lock` that need real processes: many of them
// contending for one lock, holders killed with SIGKILL, `lock run`
// superseded. They run the real binary, built once by TestLockProcesses
// (without -race: a race-instrumented process costs about 0.1 s of CPU to
// start, and the counter alone starts over 6,000).

// goBuild runs the go command with args (a build writing exe) and returns
// exe, or skips the test if there is no go command.
func goBuild(t *testing.T, exe string, args ...string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(gobin, append([]string{args[0], "-o", exe}, args[1:]...)...).CombinedOutput()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Skipf("no go command to build with: %v", err)
	}
	return exe
}

// lockBin builds the pickup binary, without -race.
func lockBin(t *testing.T) string {
	return goBuild(t, filepath.Join(t.TempDir(), "pickup"), "build", "-race=false", "github.com/pickup-dev/pickup")
}

// lockWorkerBin builds this package's tests without -race, for the
// counter's worker processes (TestLockCounterWorker): a race-instrumented
// worker spends most of the test's time in the detector, which cannot see
// races between processes anyway.
func lockWorkerBin(t *testing.T) string {
	return goBuild(t, filepath.Join(t.TempDir(), "cli.test"), "test", "-c", "-race=false", "github.com/pickup-dev/pickup/internal/cli")
}

// lockBoard is a board and the pickup binary to run on it.
type lockBoard struct {
	t     *testing.T
	bin   string
	dir   string // working directory of the commands
	board *sessions.Board
}

func newLockBoard(t *testing.T, bin string) *lockBoard {
	t.Helper()
	dir := t.TempDir()
	b, err := sessions.Init(filepath.Join(dir, "board"))
	if err != nil {
		t.Fatal(err)
	}
	return &lockBoard{t: t, bin: bin, dir: dir, board: b}
}

// env is the commands' environment: no PICKUP_* from outside, the board,
// and $PK naming the binary for shell scripts.
func (lb *lockBoard) env(extra ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "PICKUP_") || strings.HasPrefix(kv, "CLAUDE_SESSION_ID=") || strings.HasPrefix(kv, "CODEX_THREAD_ID=")
	})
	return append(env, append([]string{"PICKUP_DIR=" + lb.board.Dir, "PK=" + lb.bin}, extra...)...)
}

// pickup returns a command running pickup with args.
func (lb *lockBoard) pickup(args ...string) *exec.Cmd {
	cmd := exec.Command(lb.bin, args...)
	cmd.Dir, cmd.Env = lb.dir, lb.env()
	return cmd
}

// sh returns a command running a shell script in the board's directory.
func (lb *lockBoard) sh(script string, env ...string) *exec.Cmd {
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir, cmd.Env = lb.dir, lb.env(env...)
	return cmd
}

type lockResult struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// run runs cmd to its end, failing the test if it cannot start or takes
// more than two minutes.
func (lb *lockBoard) run(cmd *exec.Cmd) lockResult {
	lb.t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		lb.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		lb.t.Fatalf("%s: still running after 2 minutes\nstderr:\n%s", cmd, errOut.String())
	}
	r := lockResult{code: exitCodeOf(err), stdout: out.String(), stderr: errOut.String(), took: time.Since(t0)}
	if r.code < 0 {
		lb.t.Fatalf("%s: %v", cmd, err)
	}
	return r
}

// exitCodeOf is the shell's exit status of a finished command: 128+N for
// a kill by signal N, -1 if it did not run.
func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return -1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

// want runs pickup with args and requires exit code code.
func (lb *lockBoard) want(code int, args ...string) lockResult {
	lb.t.Helper()
	r := lb.run(lb.pickup(args...))
	if r.code != code {
		lb.t.Fatalf("pickup %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	return r
}

// start starts cmd in the background, output to buffers.
func (lb *lockBoard) start(cmd *exec.Cmd) *bgCmd {
	lb.t.Helper()
	bg := &bgCmd{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &bg.stdout, &bg.stderr
	if err := cmd.Start(); err != nil {
		lb.t.Fatal(err)
	}
	go func() {
		bg.err = cmd.Wait()
		close(bg.done)
	}()
	lb.t.Cleanup(func() {
		select {
		case <-bg.done:
		default:
			_ = cmd.Process.Kill()
			<-bg.done
		}
	})
	return bg
}

type bgCmd struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer // read only after done
	err            error
	done           chan struct{}
}

// wait waits up to d for the command and returns its exit code.
func (bg *bgCmd) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-bg.done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %s", bg.cmd, d)
	}
	return exitCodeOf(bg.err)
}

// eventually polls cond every 10 ms for up to d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// heldBy reports who holds key ("" if nobody alive does), read with the
// library.
func (lb *lockBoard) heldBy(key string) (claim.LockInfo, bool) {
	lb.t.Helper()
	info, held, err := claim.BoardLocks(lb.board).Check(key)
	if err != nil {
		lb.t.Fatal(err)
	}
	return info, held
}

// gone reports whether pid has exited (or is a zombie waiting for its
// parent).
func gone(pid int) bool {
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return true
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	i := bytes.LastIndexByte(data, ')')
	return i > 0 && len(data) > i+2 && data[i+2] == 'Z'
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pid
}

// TestLockProcesses runs the process-level tests of pickup lock on one
// build of the binary.
func TestLockProcesses(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("pickup lock needs Unix processes and signals")
	}
	bin := lockBin(t)
	t.Run("Counter", func(t *testing.T) { testLockCounter(t, bin, lockWorkerBin(t)) })
	t.Run("CounterExec", func(t *testing.T) {
		n := 20
		if v, err := strconv.Atoi(os.Getenv("PICKUP_TEST_LOCK_N")); err == nil {
			n = v
		}
		testLockCounterExec(t, bin, n)
	})
	t.Run("ParallelKeys", func(t *testing.T) { testLockParallelKeys(t, bin) })
	t.Run("StaleTakeoverRace", func(t *testing.T) { testLockStaleRace(t, bin) })
	t.Run("KilledHolder", func(t *testing.T) { testLockKilledHolder(t, bin) })
	t.Run("Supersede", func(t *testing.T) { testLockSupersede(t, bin) })
	t.Run("RunSignals", func(t *testing.T) { testLockRunSignals(t, bin) })
	t.Run("RunCtrlC", func(t *testing.T) { testLockRunCtrlC(t, bin) })
	t.Run("RunLost", func(t *testing.T) { testLockRunLost(t, bin) })
}

// testLockCounter: 16 processes each take one lock 200 times through the
// CLI (`pickup lock acquire --wait`, then `pickup lock release`) and
// increment a counter file under it; the counter ends at 3,200 and the
// critical sections never overlap. The processes are this package's test
// binary (TestLockCounterWorker, built without -race) running the CLI's
// Main in a loop: a pickup process per call costs 10-25 ms on a loaded
// 2-core machine, which for 6,400 calls is minutes. testLockCounterExec
// does the same with a process per call, fewer times.
func testLockCounter(t *testing.T, bin, worker string) {
	const workers = 16
	n := 200
	if testing.Short() {
		n = 20
	}
	lb := newLockBoard(t, bin)
	if err := os.WriteFile(filepath.Join(lb.dir, "c"), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	var bgs []*bgCmd
	for w := 0; w < workers; w++ {
		cmd := exec.Command(worker, "-test.run=^TestLockCounterWorker$", "-test.count=1")
		cmd.Dir = lb.dir
		cmd.Env = append(lb.env(fmt.Sprintf("W=w%02d", w), "PICKUP_NO_SYNC=1"), lockWorkerEnv+"="+strconv.Itoa(n),
			// A race-instrumented process sleeps 1 s at exit by default.
			"GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
		bgs = append(bgs, lb.start(cmd))
	}
	for w, bg := range bgs {
		if code := bg.wait(t, 5*time.Minute); code != 0 {
			t.Errorf("worker %d exited %d\nstdout:\n%s\nstderr:\n%s", w, code, bg.stdout.String(), bg.stderr.String())
		}
	}
	took := time.Since(t0)
	checkCounter(t, lb, workers*n)
	t.Logf("%d processes x %d CLI lock acquire, increment, release: %s (%.0f per second)", workers, n, took.Round(time.Millisecond), float64(workers*n)/took.Seconds())
}

// lockWorkerEnv makes TestLockCounterWorker a worker of testLockCounter
// taking the lock this many times.
const lockWorkerEnv = "PICKUP_TEST_LOCK_WORKER"

// TestLockCounterWorker is a worker process of testLockCounter; run by
// itself it does nothing.
func TestLockCounterWorker(t *testing.T) {
	v := os.Getenv(lockWorkerEnv)
	if v == "" {
		t.Skip("a helper process of TestLockProcesses/Counter")
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatal(err)
	}
	w := os.Getenv("W")
	var stderr bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr,
		Getenv: os.Getenv, Getwd: os.Getwd, Hostname: os.Hostname, Now: time.Now}
	appendLine := func(line string) {
		f, err := os.OpenFile("log", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			_, err = f.WriteString(line + "\n")
			f.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if code := Main(env, []string{"pickup", "lock", "acquire", "counter", "--wait", "5m", "--owner", w}); code != 0 {
			t.Fatalf("acquire %d: exit %d\n%s", i, code, stderr.String())
		}
		appendLine("in " + w)
		data, err := os.ReadFile("c")
		if err != nil {
			t.Fatal(err)
		}
		c, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("c", []byte(strconv.Itoa(c+1)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		appendLine("out " + w)
		if code := Main(env, []string{"pickup", "lock", "release", "counter", "--owner", w}); code != 0 {
			t.Fatalf("release %d: exit %d\n%s", i, code, stderr.String())
		}
	}
}

// testLockCounterExec: 16 shell loops take one lock n times each through
// pickup processes and increment a counter file under it, half with `lock
// acquire` + `lock release`, half with `lock run`. Each critical section
// also logs "in W" and "out W", which must strictly alternate: an overlap
// shows there even when no increment is lost. Critical sections use shell
// builtins only, so that the lock's hand-offs, not fork+exec, set the pace.
func testLockCounterExec(t *testing.T, bin string, n int) {
	const workers = 16
	lb := newLockBoard(t, bin)
	if err := os.WriteFile(filepath.Join(lb.dir, "c"), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const critical = `echo "in $W" >> log; read n < c; echo $((n+1)) > c; echo "out $W" >> log`
	pairs := `i=0
while [ $i -lt "$N" ]; do
	"$PK" lock acquire counter --wait 5m --owner "$W" >/dev/null || exit 11
	` + critical + `
	"$PK" lock release counter --owner "$W" >/dev/null || exit 14
	i=$((i+1))
done`
	runs := `export W; i=0
while [ $i -lt "$N" ]; do
	"$PK" lock run counter --wait 5m --owner "$W" -- sh -c '` + critical + `' || exit 11
	i=$((i+1))
done`
	t0 := time.Now()
	var bgs []*bgCmd
	for w := 0; w < workers; w++ {
		script := pairs
		if w%2 == 1 {
			script = runs
		}
		bgs = append(bgs, lb.start(lb.sh(script, "N="+strconv.Itoa(n), fmt.Sprintf("W=w%02d", w), "PICKUP_NO_SYNC=1")))
	}
	for w, bg := range bgs {
		if code := bg.wait(t, 5*time.Minute); code != 0 {
			t.Errorf("worker %d exited %d\nstderr:\n%s", w, code, bg.stderr.String())
		}
	}
	took := time.Since(t0)
	checkCounter(t, lb, workers*n)
	t.Logf("%d processes x %d pickup lock acquire+release or lock run: %s (%.0f per second)", workers, n, took.Round(time.Millisecond), float64(workers*n)/took.Seconds())
}

// checkCounter checks the counter and the log of a counter test, and
// that nothing is left in the lock directory.
func checkCounter(t *testing.T, lb *lockBoard, want int) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(lb.dir, "c"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(data)); got != strconv.Itoa(want) {
		t.Errorf("counter = %s, want %d", got, want)
	}
	data, err = os.ReadFile(filepath.Join(lb.dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2*want {
		t.Errorf("the log has %d lines, want %d", len(lines), 2*want)
	}
	overlaps := 0
	for i := 0; i+1 < len(lines); i += 2 {
		w, ok := strings.CutPrefix(lines[i], "in ")
		if !ok || lines[i+1] != "out "+w {
			if overlaps++; overlaps <= 5 {
				t.Errorf("log lines %d-%d: %q, %q: critical sections overlap", i+1, i+2, lines[i], lines[i+1])
			}
		}
	}
	if r := lb.want(0, "lock", "list"); r.stdout != "no locks\n" {
		t.Errorf("lock list after the counter: %q", r.stdout)
	}
	entries, err := os.ReadDir(filepath.Join(lb.board.RuntimeDir(), claim.LocksDirName))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".guard-") {
			t.Errorf("left in the lock directory: %s", e.Name())
		}
	}
}

// testLockParallelKeys: four `lock run` of four keys all hold their locks
// at once (each waits for the others to start), while the same keys
// exclude another owner.
func testLockParallelKeys(t *testing.T, bin string) {
	const k = 4
	lb := newLockBoard(t, bin)
	var bgs []*bgCmd
	for i := 0; i < k; i++ {
		bgs = append(bgs, lb.start(lb.pickup("lock", "run", fmt.Sprintf("key-%d", i), "--owner", fmt.Sprintf("r%d", i), "--",
			"sh", "-c", `touch "started-$1"; until [ -e go ]; do sleep 0.01; done`, "sh", strconv.Itoa(i))))
	}
	eventually(t, 30*time.Second, "all four running at once", func() bool {
		for i := 0; i < k; i++ {
			if _, err := os.Stat(filepath.Join(lb.dir, fmt.Sprintf("started-%d", i))); err != nil {
				return false
			}
		}
		return true
	})
	for i := 0; i < k; i++ {
		info, held := lb.heldBy(fmt.Sprintf("key-%d", i))
		if !held || info.Owner != fmt.Sprintf("r%d", i) {
			t.Errorf("key-%d: held %v by %q, want by r%d", i, held, info.Owner, i)
		}
		r := lb.want(ExitNotAvailable, "lock", "acquire", fmt.Sprintf("key-%d", i), "--owner", "other")
		if !strings.Contains(r.stderr, fmt.Sprintf("held by r%d (", i)) {
			t.Errorf("key-%d: stderr does not name r%d:\n%s", i, i, r.stderr)
		}
	}
	if err := os.WriteFile(filepath.Join(lb.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, bg := range bgs {
		if code := bg.wait(t, 30*time.Second); code != 0 {
			t.Errorf("lock run key-%d exited %d\nstderr:\n%s", i, code, bg.stderr.String())
		}
	}
	lb.want(0, "lock", "acquire", "key-0", "--owner", "other")
}

// testLockStaleRace: a lock whose holder died is raced for by 16 processes
// released at once through a FIFO: exactly one takes it over, and every
// other names that one as the holder.
func testLockStaleRace(t *testing.T, bin string) {
	const racers = 16
	rounds := 5
	if testing.Short() {
		rounds = 2
	}
	lb := newLockBoard(t, bin)
	gate := filepath.Join(lb.dir, "gate")
	if err := syscall.Mkfifo(gate, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for round := 0; round < rounds; round++ {
		// The holder: a process that then dies.
		sleeper := exec.Command("sleep", "60")
		if err := sleeper.Start(); err != nil {
			t.Fatal(err)
		}
		lb.want(0, "lock", "acquire", "stale", "--owner", "ghost", "--pid", strconv.Itoa(sleeper.Process.Pid), "--ttl", "1h")
		_ = sleeper.Process.Kill()
		_ = sleeper.Wait()
		if info, held := lb.heldBy("stale"); held || info.State != claim.LockDead {
			t.Fatalf("round %d: after its holder died the lock is %s (held %v)", round, info.State, held)
		}

		// Keep a writer open so that the racers' opens do not block; each
		// reads one line, written to all at once.
		w, err := os.OpenFile(gate, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		var bgs []*bgCmd
		for i := 0; i < racers; i++ {
			bgs = append(bgs, lb.start(lb.sh(`read x < gate; exec "$PK" lock acquire stale --owner "$W"`, fmt.Sprintf("W=racer-%02d", i))))
		}
		time.Sleep(200 * time.Millisecond) // let them all block on the gate
		if _, err := w.WriteString(strings.Repeat("go\n", racers)); err != nil {
			t.Fatal(err)
		}
		winners := []string{}
		var losers []string
		for i, bg := range bgs {
			switch code := bg.wait(t, time.Minute); code {
			case 0:
				winners = append(winners, fmt.Sprintf("racer-%02d", i))
			case ExitNotAvailable:
				losers = append(losers, bg.stderr.String())
			default:
				t.Errorf("round %d: racer %d exited %d\nstderr:\n%s", round, i, code, bg.stderr.String())
			}
		}
		w.Close()
		if len(winners) != 1 {
			t.Fatalf("round %d: %d winners %v, want exactly 1", round, len(winners), winners)
		}
		if info, held := lb.heldBy("stale"); !held || info.Owner != winners[0] {
			t.Errorf("round %d: the lock is held (%v) by %q, want %s", round, held, info.Owner, winners[0])
		}
		for _, stderr := range losers {
			if !strings.Contains(stderr, "lock stale is held by "+winners[0]+" (") {
				t.Errorf("round %d: a loser does not name the winner %s:\n%s", round, winners[0], stderr)
			}
		}
		lb.want(0, "lock", "release", "stale", "--owner", winners[0])
	}
}

// testLockKilledHolder: a holder killed with SIGKILL frees its lock at
// once, whatever its TTL: a `lock run` (whose command dies with it, on
// Linux), and a `lock acquire` whose owner process is killed.
func testLockKilledHolder(t *testing.T, bin string) {
	lb := newLockBoard(t, bin)
	run := lb.start(lb.pickup("lock", "run", "k", "--ttl", "1h", "--owner", "runner", "--",
		"sh", "-c", `echo $$ > cmd.pid; exec sleep 60`))
	cmdPID := filepath.Join(lb.dir, "cmd.pid")
	eventually(t, 30*time.Second, "lock run started its command", func() bool {
		_, err := os.Stat(cmdPID)
		return err == nil
	})
	eventually(t, 5*time.Second, "cmd.pid written", func() bool {
		data, _ := os.ReadFile(cmdPID)
		return bytes.HasSuffix(data, []byte("\n"))
	})
	if _, held := lb.heldBy("k"); !held {
		t.Fatal("lock run does not hold k")
	}
	if err := run.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := run.wait(t, 10*time.Second); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("the killed lock run exited %d", code)
	}
	r := lb.want(0, "lock", "acquire", "k", "--owner", "next")
	if r.took > 2*time.Second {
		t.Errorf("taking over the dead lock took %s", r.took)
	}
	if runtime.GOOS == "linux" {
		pid := readPID(t, cmdPID)
		eventually(t, 5*time.Second, "the command of the killed lock run is killed too", func() bool { return gone(pid) })
	}

	// lock acquire: the lock follows the owner's process (--pid).
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	lb.want(0, "lock", "acquire", "k2", "--owner", "agent", "--pid", strconv.Itoa(sleeper.Process.Pid), "--ttl", "1h")
	lb.want(ExitNotAvailable, "lock", "acquire", "k2", "--owner", "next")
	_ = sleeper.Process.Kill()
	_ = sleeper.Wait()
	r = lb.want(0, "lock", "acquire", "k2", "--owner", "next")
	if r.took > 2*time.Second {
		t.Errorf("taking over the dead lock took %s", r.took)
	}
	if info, _ := lb.heldBy("k2"); info.Owner != "next" {
		t.Errorf("k2 is held by %q, want next", info.Owner)
	}
}

// testLockSupersede: `lock run --supersede` stops an older run of the same
// key and runs; it kills one that ignores SIGTERM after its grace period;
// it never signals a holder that is not a `lock run`.
func testLockSupersede(t *testing.T, bin string) {
	lb := newLockBoard(t, bin)
	log := filepath.Join(lb.dir, "log")
	readLog := func() string {
		data, _ := os.ReadFile(log)
		return string(data)
	}

	// An older run that stops on SIGTERM.
	old := lb.start(lb.pickup("lock", "run", "issue-42", "--owner", "first", "--",
		"sh", "-c", `trap 'echo old-stopped >> log; exit 0' TERM; echo old-running >> log; while :; do sleep 0.02; done`))
	eventually(t, 30*time.Second, "the old run started", func() bool { return readLog() == "old-running\n" })
	r := lb.want(0, "lock", "run", "issue-42", "--supersede", "--owner", "second", "--", "sh", "-c", `echo new-ran >> log`)
	if got, want := readLog(), "old-running\nold-stopped\nnew-ran\n"; got != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(r.stderr, "superseding the `pickup lock run` that holds issue-42, first (pid ") {
		t.Errorf("the new run does not say what it superseded:\n%s", r.stderr)
	}
	if code := old.wait(t, 10*time.Second); code != 0 {
		t.Errorf("the old run exited %d (its command exited 0 on SIGTERM)\nstderr:\n%s", code, old.stderr.String())
	}
	if !strings.Contains(old.stderr.String(), "SIGTERM") {
		t.Errorf("the old run does not report the SIGTERM:\n%s", old.stderr.String())
	}
	if _, held := lb.heldBy("issue-42"); held {
		t.Error("issue-42 is still held after both runs")
	}

	// An older run whose command ignores SIGTERM and that would wait a
	// minute: the superseder's grace decides, then SIGKILL.
	os.Remove(log)
	old = lb.start(lb.pickup("lock", "run", "issue-42", "--grace", "1m", "--owner", "first", "--",
		"sh", "-c", `trap '' TERM; echo $$ > old.pid; echo old-running >> log; while :; do sleep 0.02; done`))
	eventually(t, 30*time.Second, "the old run started", func() bool { return readLog() == "old-running\n" })
	r = lb.want(0, "lock", "run", "issue-42", "--supersede", "--grace", "300ms", "--owner", "second", "--", "sh", "-c", `echo new-ran >> log`)
	if got, want := readLog(), "old-running\nnew-ran\n"; got != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}
	if r.took > 10*time.Second {
		t.Errorf("superseding a stuck run took %s", r.took)
	}
	if code := old.wait(t, 10*time.Second); code != 128+int(syscall.SIGKILL) {
		t.Errorf("the stuck old run exited %d, want %d (SIGKILL)", code, 128+int(syscall.SIGKILL))
	}
	if runtime.GOOS == "linux" {
		pid := readPID(t, filepath.Join(lb.dir, "old.pid"))
		eventually(t, 5*time.Second, "the stuck old command is killed with its lock run", func() bool { return gone(pid) })
	}

	// A lock taken with `lock acquire` names an agent's process: it is never
	// signalled, --supersede reports it like any held lock.
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	lb.want(0, "lock", "acquire", "issue-42", "--owner", "agent", "--pid", strconv.Itoa(sleeper.Process.Pid))
	r = lb.want(ExitNotAvailable, "lock", "run", "issue-42", "--supersede", "--owner", "second", "--", "sh", "-c", `echo must-not-run >> log`)
	if !strings.Contains(r.stderr, "lock issue-42 is held by agent (") {
		t.Errorf("stderr does not name the holder:\n%s", r.stderr)
	}
	if gone(sleeper.Process.Pid) {
		t.Error("--supersede signalled a holder that is not a lock run")
	}
	if strings.Contains(readLog(), "must-not-run") {
		t.Error("the command ran without the lock")
	}
	r = lb.want(ExitLockTimeout, "lock", "run", "issue-42", "--supersede", "--wait", "200ms", "--owner", "second", "--", "true")
	if !strings.Contains(r.stderr, "timed out waiting for lock issue-42, held by agent (") {
		t.Errorf("stderr of the timeout:\n%s", r.stderr)
	}
}

// testLockRunSignals: SIGINT and SIGTERM go to the command, which may exit
// as it likes within the grace period; lock run exits with its code and
// releases the lock. A command that ignores the signal is killed after the
// grace period.
func testLockRunSignals(t *testing.T, bin string) {
	lb := newLockBoard(t, bin)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		os.Remove(filepath.Join(lb.dir, "ready"))
		run := lb.start(lb.pickup("lock", "run", "sig", "--grace", "20s", "--",
			"sh", "-c", `trap 'exit 42' INT TERM; touch ready; while :; do sleep 0.02; done`))
		eventually(t, 30*time.Second, "the command started", func() bool {
			_, err := os.Stat(filepath.Join(lb.dir, "ready"))
			return err == nil
		})
		t0 := time.Now()
		if err := run.cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if code := run.wait(t, 15*time.Second); code != 42 {
			t.Errorf("%s: lock run exited %d, want the command's 42\nstderr:\n%s", sig, code, run.stderr.String())
		}
		if d := time.Since(t0); d > 10*time.Second {
			t.Errorf("%s: the command took %s to stop", sig, d)
		}
		if _, held := lb.heldBy("sig"); held {
			t.Errorf("%s: the lock is still held", sig)
		}
	}

	os.Remove(filepath.Join(lb.dir, "ready"))
	run := lb.start(lb.pickup("lock", "run", "sig", "--grace", "300ms", "--",
		"sh", "-c", `trap '' TERM; touch ready; while :; do sleep 0.02; done`))
	eventually(t, 30*time.Second, "the command started", func() bool {
		_, err := os.Stat(filepath.Join(lb.dir, "ready"))
		return err == nil
	})
	if err := run.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := run.wait(t, 15*time.Second); code != 128+int(syscall.SIGKILL) {
		t.Errorf("lock run of a command that ignores SIGTERM exited %d, want %d", code, 128+int(syscall.SIGKILL))
	}
	if _, held := lb.heldBy("sig"); held {
		t.Error("the lock is still held")
	}
}

// testLockRunLost: a lock taken away from a running `lock run` (a person
// released it by force) stops the command, and lock run says so and exits 6.
func testLockRunLost(t *testing.T, bin string) {
	lb := newLockBoard(t, bin)
	run := lb.start(lb.pickup("lock", "run", "lost", "--ttl", "300ms", "--owner", "runner", "--", "sleep", "60"))
	eventually(t, 30*time.Second, "lock run holds the lock", func() bool { _, held := lb.heldBy("lost"); return held })
	r := lb.want(0, "lock", "release", "lost", "--force", "--owner", "admin")
	if !strings.Contains(r.stdout, "released lock lost by force; it was held by runner (") {
		t.Errorf("forced release output: %q", r.stdout)
	}
	if code := run.wait(t, 20*time.Second); code != ExitClaimLost {
		t.Errorf("lock run exited %d, want %d\nstderr:\n%s", code, ExitClaimLost, run.stderr.String())
	}
	if !strings.Contains(run.stderr.String(), "lock lost was released by someone else") {
		t.Errorf("lock run does not say the lock was lost:\n%s", run.stderr.String())
	}
}

// TestLockHelpers covers the decisions of lock run that need no board.
func TestLockHelpers(t *testing.T) {
	a := proc.Process{PID: 10, Start: 100}
	b := proc.Process{PID: 20, Start: 200}
	if !newer(b, a) || newer(a, b) {
		t.Error("newer: the later start must be newer")
	}
	if !newer(proc.Process{PID: 30, Start: 100}, a) || newer(a, proc.Process{PID: 30, Start: 100}) {
		t.Error("newer: the same start tick must be decided by pid")
	}
	if newer(proc.Process{PID: 30}, a) || newer(a, proc.Process{PID: 30}) {
		t.Error("newer: an unknown start is never newer")
	}
	for s, want := range map[string]string{"repo:main": "repo:main", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "x;rm": "'x;rm'"} {
		if got := shellWord(s); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", s, got, want)
		}
	}
	if d := lockBeatEvery(claim.DefaultLockTTL); d != time.Minute {
		t.Errorf("lockBeatEvery(10m) = %s", d)
	}
	if d := lockBeatEvery(300 * time.Millisecond); d != 100*time.Millisecond {
		t.Errorf("lockBeatEvery(300ms) = %s", d)
	}

	if runtime.GOOS != "linux" {
		return
	}
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"pickup", "lock", "run", "k"}, true},
		{[]string{"pickup", "--owner", "a", "lock", "run", "--wait", "1s", "k", "--", "x"}, true},
		{[]string{"pickup", "lock", "--", "run", "k"}, false},
		{[]string{"pickup", "run", "lock"}, false},
		{[]string{"pickup", "lock", "acquire", "run"}, false},
		{[]string{"pickup", "lock", "--owner", "run", "run", "k"}, true},
	} {
		cmd := exec.Command("sh", append([]string{"-c", "sleep 30; :"}, tc.args...)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Right after exec the kernel may not have set the new arguments
		// yet (Start returns once the old memory is released).
		eventually(t, 5*time.Second, "the arguments of sh are visible", func() bool {
			data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid))
			return bytes.Contains(data, []byte("sleep 30"))
		})
		got := isLockRunCmdline(cmd.Process.Pid)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if got != tc.want {
			t.Errorf("isLockRunCmdline(sh -c ... %s) = %v, want %v", strings.Join(tc.args, " "), got, tc.want)
		}
	}
	if isLockRunCmdline(os.Getpid()) {
		t.Error("this test is not a lock run")
	}
}
