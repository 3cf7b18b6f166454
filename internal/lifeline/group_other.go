//go:build unix && !linux

package lifeline

import (
	"os"
	"syscall"
)

// executable is this program's file, as the system names it.
func executable() (string, error) { return os.Executable() }

// setDeathSignal does nothing: only Linux has PR_SET_PDEATHSIG. The gate
// and the watchdog do its work here; without a watchdog (a nil *Lifeline),
// a command outlives a pickup killed with SIGKILL.
func setDeathSignal(*syscall.SysProcAttr) {}

// hasLiveMember cannot tell zombies from live processes without /proc: a
// group counts as alive until kill(-pgid, 0) fails, that is until its
// zombies are reaped (launchd and init do so at once).
func hasLiveMember(int) bool { return true }
