//go:build unix

package proc

import "syscall"

// signal0 is kill(pid, 0): nil or EPERM if the pid exists, ESRCH if not.
func signal0(pid int) error {
	if pid <= 0 {
		return syscall.ESRCH // 0 and -1 would address process groups
	}
	for {
		err := syscall.Kill(pid, 0)
		if err != syscall.EINTR {
			return err
		}
	}
}
