package lifeline

import (
	"os"
	"runtime"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// The gate gets its two pipes through exec.Cmd.ExtraFiles, which puts
// them at descriptors 3 and up in the child. A descriptor that this
// process inherited open across exec (a make jobserver's pipe, a wrapper's
// log: anything opened without close-on-exec above stderr) reaches a
// command started directly at its own number, as exec.Cmd leaves it open;
// through the gate, the pipes would take its number and the command would
// lose it. So the gate passes such descriptors on at their numbers, and
// its pipes go above them.

// passedOn lists the descriptors above stderr that a child started now
// would inherit: those open in this process without close-on-exec
// (everything Go opens has it set), in order.
func passedOn() []int {
	dir := "/dev/fd"
	if runtime.GOOS == "linux" {
		dir = "/proc/self/fd"
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // cannot tell: pass on none, as before
	}
	var fds []int
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		// The listing's own descriptor is closed by now (EBADF), and
		// close-on-exec: either way not passed on.
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			fds = append(fds, fd)
		}
	}
	slices.Sort(fds)
	return fds
}

// gateFiles lays out the gate's descriptors from 3 on: the caller's extra
// files first, as exec.Cmd puts them; each descriptor this process passes
// on at its own number (a copy, closed by the returned func after the
// start), unless a caller's file takes it, as it would without the gate;
// then the gate's wait and report pipes, whose numbers it returns.
func gateFiles(extra []*os.File, wait, report *os.File) (files []*os.File, waitFD, reportFD int, closeCopies func()) {
	inherited := passedOn()
	top := 3 + len(extra)
	if n := len(inherited); n > 0 && inherited[n-1]+1 > top {
		top = inherited[n-1] + 1
	}
	files = make([]*os.File, top-3, top-3+2)
	copy(files, extra)
	var copies []*os.File
	for _, fd := range inherited {
		if fd-3 < len(extra) {
			continue
		}
		dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			continue // closed meanwhile: nothing to pass on
		}
		f := os.NewFile(uintptr(dup), "inherited descriptor "+strconv.Itoa(fd))
		copies = append(copies, f)
		files[fd-3] = f
	}
	files = append(files, wait, report)
	return files, top, top + 1, func() {
		for _, f := range copies {
			f.Close()
		}
	}
}
