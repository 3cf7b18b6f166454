//go:build !linux

package proc

// WatchExits watches nothing on this system: a waiter learns of an owner's
// death at its next rescan.
func (e Env) WatchExits(ps []Process) *ExitWatch { return &ExitWatch{} }
