//go:build !linux

package fsx

// AppendIsAtomic reports false off Linux: appenders lock around each write
// (see the Linux version).
func AppendIsAtomic(fd int) bool { return false }
