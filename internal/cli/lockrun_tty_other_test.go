//go:build !linux

package cli

import "testing"

// testLockRunCtrlC needs a pseudo-terminal, which the test opens the Linux
// way (/dev/ptmx and TIOCGPTN).
func testLockRunCtrlC(t *testing.T, _ string) {
	t.Skip("the Ctrl-C test opens its pseudo-terminal the Linux way")
}
