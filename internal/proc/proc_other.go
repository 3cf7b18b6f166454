//go:build !linux

package proc

import (
	"errors"
	"syscall"
)

// stat knows only whether the pid exists: there is no /proc to read a start
// time from.
func (e Env) stat(pid int) (stat, error) {
	err := signal0(pid)
	if errors.Is(err, syscall.ESRCH) {
		return stat{}, ErrNotFound
	}
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return stat{}, err
	}
	return stat{}, nil
}

func (e Env) bootID() string { return "" }
