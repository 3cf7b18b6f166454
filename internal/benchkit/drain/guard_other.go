//go:build !linux

package drain

// lockByte does nothing where the system has no open file description
// locks, as sessions does there.
func lockByte(fd int, at int64) error { return nil }
