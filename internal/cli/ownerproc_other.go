//go:build !linux

package cli

import "os"

// invokerPID is pickup's parent where the process table cannot be walked.
func invokerPID() int { return os.Getppid() }
