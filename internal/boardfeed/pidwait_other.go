//go:build !linux

package boardfeed

import "github.com/pickup-dev/pickup/internal/proc"

// pidWait: without pidfds a death is seen at the next change of the board.
func (l *live) pidWait(proc.Process, func()) {}
