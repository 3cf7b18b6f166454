package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
)

// The tests of `pickup lock` that need real processes: many of them
// contending for one lock, holders killed with SIGKILL, `lock run`
// superseded. They run the real binary, built once by TestLockProcesses
// (without -race: a race-instrumented process costs about 0.1 s of CPU to
// start, and the counter alone starts over 6,000).

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
