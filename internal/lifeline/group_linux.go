package lifeline

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// executable is this very program, even if its file was replaced or
// deleted since it started (an upgrade).
func executable() (string, error) {
	const self = "/proc/self/exe"
	if _, err := os.Stat(self); err != nil {
		return "", err
	}
	return self, nil
}

// setDeathSignal asks the kernel to SIGKILL the command's first process
// when pickup dies: at once, before the watchdog gets to it, and the only
// protection a command started with a nil *Lifeline has. (The kernel sends
// it when the thread that forked dies; Go ends threads only with goroutines
// that lock them, which pickup's do not. A set-user-ID command loses it.)
func setDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}

// hasLiveMember scans /proc for a process of group pgid that is not a
// zombie. Without /proc it cannot tell, and says yes.
func hasLiveMember(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		data, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		if state, pg, ok := parseStat(data); ok && pg == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// parseStat returns the state (field 3) and the process group (field 5)
// of a /proc/PID/stat line. The command name, field 2, is in parentheses
// and may itself hold spaces and parentheses: the fields after it are found
// from its last ')'.
func parseStat(data []byte) (state byte, pgid int, ok bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(string(fields[2]))
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pg, true
}
