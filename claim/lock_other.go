//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package claim

import (
	"errors"
	"os"
)

// Named locks rely on flock(2) (per open file, dropped when the process
// dies), which this system lacks or only emulates with per-process record
// locks.
var errNoFlock = errors.New("named locks need flock(2), which this system lacks")

func flockFile(path string, perm os.FileMode) (unlock func(), err error) {
	return nil, errNoFlock
}
func flockLinked(path string, perm os.FileMode) (unlock func(), err error) {
	return nil, errNoFlock
}
func readSmall(path string, max int) ([]byte, error) { return nil, errNoFlock }
func createPrivate(path string, perm os.FileMode) (int, fileID, error) {
	return -1, fileID{}, errNoFlock
}
func writeFD(fd int, data []byte, sync bool) error { return errNoFlock }
func pathID(path string) (fileID, error)           { return fileID{}, errNoFlock }
func closeFD(fd int)                               {}
