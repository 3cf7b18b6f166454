//go:build !linux

package boardfeed

import (
	"os"
	"time"

	"github.com/pickup-dev/pickup/internal/proc"
)

// pidWait: without pidfds a death is seen at the next change of the board.
func (l *live) pidWait(proc.Process, func()) {}

func (l *live) startStop() {}

// changeTime: the modification time stands in where ctime is not read.
func changeTime(path string) time.Time {
	info, err := os.Lstat(path)
	if err != nil {
		return time.Time{}
	}
	return info.ModTime()
}
