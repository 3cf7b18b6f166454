//go:build !linux

package boardfeed

import (
	"os"
	"time"

	"github.com/pickup-dev/pickup/internal/proc"
)

// pidWait: without pidfds a death is seen at the next change of the
// board. A p that runs counts as awaited: its judgment changes by its exit
// alone, not by a moment to set the timer to.
func (l *live) pidWait(_ string, p proc.Process, _ func()) bool {
	return l.f.sys.Liveness(p, l.f.sys.Self()) == proc.Alive
}

func (l *live) startStop() {}

// changeTime: the modification time stands in where ctime is not read.
func changeTime(path string) time.Time {
	info, err := os.Lstat(path)
	if err != nil {
		return time.Time{}
	}
	return info.ModTime()
}
