package main

// What /proc says about a waiting process: asleep, watching, its CPU time.

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// waitIdle returns once pid watches at least two directories with inotify
// (Wait watches todo/ and done/ before its first look at the board) and
// every thread of it sleeps: it has looked, found nothing, and blocks. On
// systems without /proc it just sleeps a moment.
func waitIdle(pid int) error {
	if _, err := os.Stat("/proc/self/fdinfo"); err != nil {
		time.Sleep(200 * time.Millisecond)
		return nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if inotifyWatches(pid) >= 2 && allSleeping(pid) {
			// Sleeping threads could still be between two steps of the
			// first look (a page fault, a preemption): take it twice.
			time.Sleep(5 * time.Millisecond)
			if allSleeping(pid) {
				return nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return fmt.Errorf("pickup next --wait (pid %d) did not settle into waiting within 10s", pid)
}

// inotifyWatches counts the inotify watches pid holds.
func inotifyWatches(pid int) int {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0
	}
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err != nil || target != "anon_inode:inotify" {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
		if err != nil {
			continue
		}
		n += strings.Count(string(info), "inotify wd:")
	}
	return n
}

// allSleeping reports whether every thread of pid is in state S.
func allSleeping(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			return false
		}
		// pid (comm) state ...: comm may hold spaces; state follows the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || i+2 >= len(stat) || stat[i+2] != 'S' {
			return false
		}
	}
	return true
}

// procCPU returns pid's user+system time from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("cannot parse /proc/%d/stat", pid)
	}
	f := strings.Fields(string(stat[i+1:]))
	// After the comm: state(0) ppid pgrp session tty tpgid flags minflt
	// cminflt majflt cmajflt utime(11) stime(12).
	if len(f) < 13 {
		return 0, fmt.Errorf("cannot parse /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cannot parse /proc/%d/stat", pid)
	}
	const clkTck = 100 // USER_HZ: 100 on every Linux architecture Go supports
	return time.Duration(ut+st) * time.Second / clkTck, nil
}
