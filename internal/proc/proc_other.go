//go:build !linux

package proc

import (
	"errors"
	"os"
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

func (e Env) readBootID() string { return "" }

func (e Env) readOwnNamespace() uint64 { return 0 }

func (e Env) exe(pid int) string { return "" }

// comparable: without pid namespaces, a pid of this host means the same
// process to every process of it.
func comparable(p, local Process) bool { return true }

// Invokers is pickup's parent where the process table cannot be walked:
// a shell that ran pickup stands for whatever ran the shell.
func (e Env) Invokers() []Process {
	p, err := e.Lookup(os.Getppid())
	if err != nil {
		return nil
	}
	p.Why = WhyParent
	return []Process{p}
}
