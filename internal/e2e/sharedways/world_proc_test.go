package sharedways

import (
	"os/exec"
	"syscall"
)

func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills cmd's whole process group (the script, its subshells
// and the pickup processes they started).
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// gitCmd is git in dir with the test's environment.
func gitCmd(r *remote, dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = baseEnv(r.home)
	return cmd
}
