package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

func (e Env) stat(pid int) (stat, error) {
	b, err := readProc(filepath.Join(e.procRoot(), strconv.Itoa(pid), "stat"))
	// ESRCH: the process exited while its file was being read.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return stat{}, ErrNotFound
	}
	if err != nil {
		return stat{}, err
	}
	return parseStat(b)
}

// parseStat decodes /proc/PID/stat. Its second field is the command name in
// parentheses, which may itself hold spaces and ')': the fields after it
// start after the last ')'.
func parseStat(b []byte) (stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("parse process stat: no command name")
	}
	// Fields from 3 (state) on: ppid is field 4, pgrp 5, session 6,
	// tty_nr 7, starttime 22.
	f := strings.Fields(string(b[i+1:]))
	const state, ppid, pgrp, session, ttyNr, starttime = 3 - 3, 4 - 3, 5 - 3, 6 - 3, 7 - 3, 22 - 3
	if len(f) <= starttime {
		return stat{}, fmt.Errorf("parse process stat: %d fields, want at least %d", len(f)+2, starttime+3)
	}
	start, err := strconv.ParseUint(f[starttime], 10, 64)
	if err != nil {
		return stat{}, fmt.Errorf("parse process stat: start time: %w", err)
	}
	parent, err := strconv.Atoi(f[ppid])
	if err != nil {
		return stat{}, fmt.Errorf("parse process stat: parent: %w", err)
	}
	st := stat{start: start, ppid: parent, zombie: f[state] == "Z" || f[state] == "X"}
	// Unreadable values stay 0: unknown, which proves nothing.
	st.pgrp, _ = strconv.Atoi(f[pgrp])
	st.session, _ = strconv.Atoi(f[session])
	if tty, err := strconv.ParseInt(f[ttyNr], 10, 64); err == nil && tty > 0 {
		st.tty = uint64(tty)
	}
	return st, nil
}

func (e Env) readBootID() string {
	b, err := readProc(filepath.Join(e.procRoot(), "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// initialPidNS is the inode of the machine's first pid namespace (the
// kernel's PROC_PID_INIT_INO): its pid 1 is the system's init.
const initialPidNS = 0xEFFFFFFC

// ownNamespace returns the inode of the caller's pid namespace, or 0 if
// /proc does not number processes as the caller's kill(2) does: a sandbox
// that made a new pid namespace but kept the outer /proc shows other
// numbers, and nothing read there may be trusted for a pid of ours.
func (e Env) readOwnNamespace() uint64 {
	root := e.procRoot()
	self, err := os.Readlink(filepath.Join(root, "self"))
	if err != nil || self != strconv.Itoa(e.pid()) {
		return 0
	}
	link, err := os.Readlink(filepath.Join(root, self, "ns", "pid"))
	if err != nil {
		return 0
	}
	inode, ok := strings.CutPrefix(link, "pid:[")
	inode, ok2 := strings.CutSuffix(inode, "]")
	if !ok || !ok2 {
		return 0
	}
	n, err := strconv.ParseUint(inode, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// exe returns what process pid runs, "" if that cannot be read (another
// user's process, a kernel thread).
func (e Env) exe(pid int) string {
	p, err := os.Readlink(filepath.Join(e.procRoot(), strconv.Itoa(pid), "exe"))
	if err != nil {
		return ""
	}
	// An executable replaced on disk while it runs (an upgrade) reads so.
	return strings.TrimSuffix(p, " (deleted)")
}

// comparable reports whether a pid of p means to the judge what it meant
// when p was recorded: both were numbered in one pid namespace, and the
// judge's /proc is its own namespace's.
func comparable(p, local Process) bool {
	return p.PidNS != 0 && p.PidNS == local.PidNS
}

// readProc reads a small file of /proc with plain system calls: os.Open
// would register each file with the runtime's poller (an epoll_ctl, which
// /proc files refuse, and an fstat), and the first one would set the
// poller up; a hook walking up its parents reads several of them.
func readProc(path string) ([]byte, error) {
	fd, err := ignoringEINTR(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := ignoringEINTR(func() (int, error) { return syscall.Read(fd, buf[len(buf):cap(buf)]) })
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

func ignoringEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != syscall.EINTR {
			return n, err
		}
	}
}
