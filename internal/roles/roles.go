// Package roles runs the hidden roles in which pickup's own executables are
// started again, by pickup itself or by git: the watchdog and the gates of
// `pickup work` and `lock run` (internal/lifeline), and the relay that git
// runs as core.gitProxy for a git:// remote (internal/gitx).
//
// No package takes over a process from an init function: every executable
// that can be started in one of these roles — pickup's main, the bench
// driver, and each test binary that runs pickup in-process — calls Run
// first, before it looks at its arguments, and exits with its code when it
// reports ok. A process that was not started in a role is left alone.
package roles

import (
	"os"

	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/internal/lifeline"
)

// Run runs the role that args (the process's os.Args) and the environment
// name, and returns its exit code with ok true; ok false: no role, nothing
// done.
func Run(args []string) (code int, ok bool) {
	if code, ok := lifeline.RunRole(args); ok {
		return code, true
	}
	return gitx.RunProxy(args, os.Getenv)
}
