package lifeline

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The test binary is a watchdog when run with Arg (the package's init does
// that), and with envPickup set it plays pickup: it starts a lifeline and
// some command groups, says so, and waits to be killed.
const envPickup = "LIFELINE_TEST_PICKUP"

func TestMain(m *testing.M) {
	if code, ok := RunRole(os.Args); ok { // the watchdogs and gates the tests start
		os.Exit(code)
	}
	if marker := os.Getenv(envPickup); marker != "" {
		os.Exit(playPickup(marker))
	}
	os.Exit(m.Run())
}

// playPickup starts a lifeline and three groups of a shell and two sleeps
// (one in the background), prints "started WATCHDOG-PID" and blocks.
func playPickup(marker string) int {
	l, err := Start(os.Args[0], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for range 3 {
		cmd := exec.Command("sh", "-c", fmt.Sprintf("sleep %s & sleep %s; true", marker, marker))
		if _, err := l.Start(cmd); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Printf("started %d\n", l.PID())
	select {}
}

// TestWatchdogByHand: run without a pipe on its standard input, the
// watchdog refuses (it would read a terminal).
func TestWatchdogByHand(t *testing.T) {
	cmd := exec.Command(os.Args[0], Arg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "internal command") {
		t.Errorf("watchdog without a pipe: %v, stderr %q", err, stderr.String())
	}
}

func TestReadGroups(t *testing.T) {
	var diag bytes.Buffer
	got := readGroups(strings.NewReader("+10\n+11\n-10\n+1\n+0\n-x\n\n+12\n"), &diag)
	if len(got) != 2 || !got[11] || !got[12] {
		t.Errorf("groups %v, want 11 and 12", got)
	}
	if n := strings.Count(diag.String(), "ignoring"); n != 4 {
		t.Errorf("%d lines ignored, want 4 (+1, +0, -x, empty):\n%s", n, diag.String())
	}
}

func TestSignalGroupRefusesOwnAndAll(t *testing.T) {
	for _, pgid := range []int{-5, 0, 1} {
		if err := signalGroup(pgid, 0); err == nil {
			t.Errorf("signalGroup(%d) did not refuse", pgid)
		}
	}
}
