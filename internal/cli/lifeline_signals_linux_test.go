package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What changes for signals now that each command leads a process group of
// its own, apart from pickup's: the signals pickup passes on reach every
// process of the group, and job control (Ctrl-Z, reading the terminal)
// works as it did when the commands shared pickup's group.

// groupScript is a shell whose foreground child is another shell: both
// trap sig and log it; the child then exits, the parent goes on and logs
// "after". Both log only if the signal reaches the whole group.
func groupScript(sig string) string {
	return fmt.Sprintf(`trap 'echo parent >> log.$PICKUP_SESSION_ID' %[1]s; `+
		`sh -c "trap 'echo child >> log.\$PICKUP_SESSION_ID; exit 3' %[1]s; touch ready.\$PICKUP_SESSION_ID; while :; do sleep 0.02; done"; `+
		`echo after >> log.$PICKUP_SESSION_ID`, sig)
}

// testLifelineSignals: SIGINT and SIGTERM sent to `lock run` and SIGTERM
// sent to `work` reach the command's child as well as the command, once.
func testLifelineSignals(t *testing.T, bin string) {
	for _, tt := range []struct {
		cmd  string
		sig  syscall.Signal
		want int // pickup's exit code
	}{
		{"lock run", syscall.SIGINT, 0}, // the command's exit code
		{"lock run", syscall.SIGTERM, 0},
		{"work", syscall.SIGINT, 130}, // stopped by SIGINT
		{"work", syscall.SIGTERM, 143},
	} {
		lb := newLockBoard(t, bin)
		script := groupScript(strings.TrimPrefix(signalName(tt.sig), "SIG"))
		args := []string{"lock", "run", "k", "--grace", "20s", "--", "sh", "-c", script}
		if tt.cmd == "work" {
			lb.want(0, "new", "--title", "one")
			args = []string{"work", "--owner", "w", "--grace", "20s", "--", "sh", "-c", script}
		}
		run := lb.pickup(args...)
		stderr := startToFiles(t, run)
		eventually(t, 30*time.Second, tt.cmd+": the child shell runs", func() bool {
			m, _ := filepath.Glob(filepath.Join(lb.dir, "ready.*"))
			return len(m) == 1
		})
		if err := run.Process.Signal(tt.sig); err != nil {
			t.Fatal(err)
		}
		if code := waitExit(t, run, 15*time.Second); code != tt.want {
			t.Errorf("%s, %s: exit %d, want %d\nstderr:\n%s", tt.cmd, signalName(tt.sig), code, tt.want, stderr())
		}
		logs, _ := filepath.Glob(filepath.Join(lb.dir, "log.*"))
		if len(logs) != 1 {
			t.Fatalf("%s, %s: logs %v", tt.cmd, signalName(tt.sig), logs)
		}
		if got, _ := os.ReadFile(logs[0]); string(got) != "child\nparent\nafter\n" {
			t.Errorf("%s, %s: log %q, want child, parent, after: the signal did not reach each process of the group once", tt.cmd, signalName(tt.sig), got)
		}
	}
}

// testLifelineLockRunTerminal: `lock run` in the foreground of a terminal
// gives its command the terminal, so the command can read it. Ctrl-Z stops
// the command and pickup with it, as a shell expects of a job; continued
// (the shell's fg), pickup continues the command and gives it the terminal
// again.
func testLifelineLockRunTerminal(t *testing.T, bin string) {
	lb := newLockBoard(t, bin)
	run := lb.pickup("lock", "run", "tty", "--", "sh", "-c", `echo $$ > cmd.pid; read line; echo "got $line" > out`)
	bg, master := inTerminal(t, lb, run)
	pidFile := filepath.Join(lb.dir, "cmd.pid")
	eventually(t, 30*time.Second, "the command started", func() bool {
		data, _ := os.ReadFile(pidFile)
		return bytes.HasSuffix(data, []byte("\n"))
	})
	cmdPID, pickupPID := readPID(t, pidFile), run.Process.Pid
	if _, err := master.Write([]byte{0x1a}); err != nil { // ^Z, VSUSP
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "Ctrl-Z stopped the command and pickup", func() bool {
		return procState(cmdPID) == 'T' && procState(pickupPID) == 'T'
	})
	// fg: pickup leads its session here, so its group's id is its pid.
	if err := syscall.Kill(-pickupPID, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the command and pickup continued", func() bool {
		return procState(cmdPID) != 'T' && procState(pickupPID) != 'T'
	})
	if _, err := master.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if code := bg.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("lock run exited %d\nstderr:\n%s", code, bg.stderr.String())
	}
	if got, err := os.ReadFile(filepath.Join(lb.dir, "out")); string(got) != "got hello\n" {
		t.Errorf("the command read %q from the terminal, want got hello: %v", got, err)
	}
}

// testLifelineWorkCtrlZ: Ctrl-Z in the terminal where `work` runs stops
// its commands (in groups of their own, out of the terminal's reach) and
// pickup; continued, they all run on, and Ctrl-C then stops work.
func testLifelineWorkCtrlZ(t *testing.T, bin string) {
	lb := newLockBoard(t, bin)
	lb.want(0, "new", "--title", "one")
	lb.want(0, "new", "--title", "two")
	// The commands do not fork: a shell that forks while its group is
	// being stopped can wait in vfork for a child stopped before its exec,
	// stopped in effect but in state D, not T.
	run := lb.pickup("work", "-j", "2", "--owner", "w", "--",
		"sh", "-c", `echo $$ > pid.$PICKUP_SESSION_ID; exec sleep 60`)
	bg, master := inTerminal(t, lb, run)
	var pids []int
	eventually(t, 30*time.Second, "both commands started", func() bool {
		files, _ := filepath.Glob(filepath.Join(lb.dir, "pid.*"))
		pids = pids[:0]
		for _, f := range files {
			if data, _ := os.ReadFile(f); bytes.HasSuffix(data, []byte("\n")) {
				pids = append(pids, readPID(t, f))
			}
		}
		return len(pids) == 2
	})
	states := func() string {
		s := []byte{procState(run.Process.Pid)}
		for _, pid := range pids {
			s = append(s, procState(pid))
		}
		return string(s)
	}
	if _, err := master.Write([]byte{0x1a}); err != nil { // ^Z
		t.Fatal(err)
	}
	last := ""
	defer func() {
		if t.Failed() {
			t.Logf("states of pickup and its commands: %q", last)
		}
	}()
	eventually(t, 10*time.Second, "Ctrl-Z stopped pickup and both commands", func() bool { last = states(); return last == "TTT" })
	if err := syscall.Kill(-run.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "pickup and both commands continued", func() bool { return !strings.Contains(states(), "T") })
	if _, err := master.Write([]byte{0x03}); err != nil { // ^C
		t.Fatal(err)
	}
	if code := bg.wait(t, 15*time.Second); code != 130 {
		t.Fatalf("work exited %d, want 130\nstderr:\n%s", code, bg.stderr.String())
	}
}
