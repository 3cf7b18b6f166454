//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package claim

import "errors"

// Named locks rely on flock(2) (per open file, dropped when the process
// dies), which this system lacks or only emulates with per-process record
// locks.
var errNoFlock = errors.New("named locks need flock(2), which this system lacks")

func flockFile(path string) (unlock func(), err error)   { return nil, errNoFlock }
func flockLinked(path string) (unlock func(), err error) { return nil, errNoFlock }
func readSmall(path string, max int) ([]byte, error)     { return nil, errNoFlock }
func createPrivate(path string) (int, fileID, error)     { return -1, fileID{}, errNoFlock }
func writeFD(fd int, data []byte, sync bool) error       { return errNoFlock }
func pathID(path string) (fileID, error)                 { return fileID{}, errNoFlock }
func closeFD(fd int)                                     {}
