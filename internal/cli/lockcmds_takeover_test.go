package cli

// The lock process tests where a holder goes away or is pushed aside:
// stale records raced for, killed holders, `lock run` superseded, signalled
// or losing its lock; and the small helpers' table tests.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
)

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

// deadHolderBound: a lock whose holder died is taken over at once, not
// after its TTL (an hour here); a minute tells the two apart on a machine
// however slow or busy, which a bound of seconds did not.
const deadHolderBound = time.Minute

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
	if r.took > deadHolderBound {
		t.Errorf("taking over the dead lock took %s (its TTL is an hour: it waited for the lease)", r.took)
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
	if r.took > deadHolderBound {
		t.Errorf("taking over the dead lock took %s (its TTL is an hour: it waited for the lease)", r.took)
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
	// The old run's own grace is a minute: a supersede that took that
	// long waited for it (a busy machine makes 300ms seconds, never a
	// minute).
	if r.took >= time.Minute {
		t.Errorf("superseding a stuck run took %s: the old run's grace (1m) decided, not the superseder's (300ms)", r.took)
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
		// (42, not a kill's 137: the trap ran within the 20 s grace.)
		t.Logf("%s: the command stopped %s after the signal", sig, time.Since(t0).Round(time.Millisecond))
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
