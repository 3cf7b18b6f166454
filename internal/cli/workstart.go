package cli

// A command that pickup work cannot start (a typo in its name, a file that
// is not executable) is the caller's mistake, not the session's: counted as
// failed attempts, it once set a whole backlog aside in failed/ within a
// second. work stops instead, gives back what it claimed, uncounted, and
// exits 2 saying why and what to do.

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pickup-dev/pickup/claim"
)

// cannotStartError: work's command could not be started. It wraps
// claim.ErrNotStarted, which makes the pool stop without counting an
// attempt, and the reason (exec.ErrNotFound, syscall.EACCES, ...).
type cannotStartError struct {
	name string // the command as the user wrote it ({} replaced)
	err  error
}

func (e *cannotStartError) Error() string {
	return fmt.Sprintf("cannot start %s: %v", e.name, e.reason())
}

func (e *cannotStartError) Unwrap() []error { return []error{claim.ErrNotStarted, e.err} }

// reason is why, without the wrapping that repeats the command's name.
func (e *cannotStartError) reason() error {
	var ee *exec.Error
	if errors.As(e.err, &ee) {
		return ee.Err
	}
	var pe *fs.PathError
	if errors.As(e.err, &pe) {
		return pe.Err
	}
	return e.err
}

// Hint says how to correct the command.
func (e *cannotStartError) Hint() string {
	const again = "; then run pickup work again"
	name := sanitize(e.name)
	viaShell := fmt.Sprintf("run it with its interpreter (pickup work -- sh %s {})", name)
	switch {
	case errors.Is(e.err, exec.ErrNotFound):
		return name + " was not found: check its spelling, or give its path" + again
	case errors.Is(e.err, exec.ErrDot):
		return fmt.Sprintf("%s was found only in a relative directory of $PATH, which pickup does not run from: give its path (./%s)%s", name, name, again)
	case errors.Is(e.err, syscall.ENOENT):
		return fmt.Sprintf("there is no %s (or, for a script, no interpreter its #! line names): check the path, which is relative to the directory pickup work runs in%s", name, again)
	case errors.Is(e.err, syscall.EACCES):
		return fmt.Sprintf("%s is not executable: chmod +x %s, or %s%s", name, name, viaShell, again)
	case errors.Is(e.err, syscall.ENOEXEC):
		return fmt.Sprintf("%s is not a program this system can run (a script without a #! line?): add one, or %s%s", name, viaShell, again)
	}
	return "the system did not start it; no session was counted as failed: run pickup work again once that is resolved"
}

// notStarted is the error of a run whose command could not start.
func notStarted(name string, err error) error {
	return &cannotStartError{name: name, err: err}
}

// lookCommand finds work's command in $PATH once, before anything is
// claimed: a name that is not there is reported at once, with nothing
// touched. It returns "" for a command each run must look up itself: one
// with a slash (run as it is), one whose name a session's path makes
// ({}), or one found only in a relative directory of $PATH (each run then
// reports it).
func lookCommand(name string) (string, error) {
	if filepath.Base(name) != name || strings.Contains(name, "{}") {
		return "", nil
	}
	lp, err := exec.LookPath(name)
	if errors.Is(err, exec.ErrNotFound) {
		return "", exitError{code: ExitUsage, err: fmt.Errorf("work: %w; nothing was claimed", notStarted(name, err))}
	}
	if err != nil || !filepath.IsAbs(lp) {
		return "", nil
	}
	return lp, nil
}
