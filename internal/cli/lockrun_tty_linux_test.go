package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns the two ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("number the pseudo-terminal: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return master, tty
}

// inTerminal starts cmd as the foreground of a new pseudo-terminal, as a
// shell would: it leads a new session whose controlling terminal is the
// pty, so its process group is that terminal's foreground group. What is
// written to master is typed in that terminal.
func inTerminal(t *testing.T, lb *lockBoard, cmd *exec.Cmd) (bg *bgCmd, master *os.File) {
	t.Helper()
	master, tty := openPTY(t)
	cmd.Stdin = tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	return lb.start(cmd), master
}

// ctrlCInTerminal starts cmd in a new terminal (inTerminal). Once ready
// reports true it types Ctrl-C there, which sends SIGINT to the terminal's
// foreground group, and returns the running command.
func ctrlCInTerminal(t *testing.T, lb *lockBoard, cmd *exec.Cmd, what string, ready func() bool) *bgCmd {
	t.Helper()
	bg, master := inTerminal(t, lb, cmd)
	eventually(t, 30*time.Second, what, ready)
	if _, err := master.Write([]byte{0x03}); err != nil { // ^C, VINTR
		t.Fatal(err)
	}
	return bg
}

// testLockRunCtrlC: `lock run` in the foreground of a terminal hands the
// terminal to its command's process group, so Ctrl-C typed there sends
// SIGINT to the command's group and not to pickup. The command gets it
// once (many programs take a second SIGINT as "quit now"); pickup waits
// for it and exits with its code.
func testLockRunCtrlC(t *testing.T, bin string) {
	lb := newLockBoard(t, bin)
	run := lb.pickup("lock", "run", "tty", "--grace", "20s", "--",
		"sh", "-c", `trap 'echo INT >> ints; exit 42' INT; touch ready; while :; do sleep 0.02; done`)
	bg := ctrlCInTerminal(t, lb, run, "the command started", func() bool {
		_, err := os.Stat(filepath.Join(lb.dir, "ready"))
		return err == nil
	})
	if code := bg.wait(t, 15*time.Second); code != 42 {
		t.Fatalf("lock run exited %d, want the command's 42\nstderr:\n%s", code, bg.stderr.String())
	}
	stderr := bg.stderr.String()
	if strings.Contains(stderr, "sending SIGINT") {
		t.Errorf("lock run got the Ctrl-C and passed it on: its command did not have the terminal:\n%s", stderr)
	}
	if ints, err := os.ReadFile(filepath.Join(lb.dir, "ints")); err != nil || string(ints) != "INT\n" {
		t.Errorf("the command did not get the terminal's SIGINT once: %q, %v", ints, err)
	}
	if _, held := lb.heldBy("tty"); held {
		t.Error("the lock is still held")
	}
}
