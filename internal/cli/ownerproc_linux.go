package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// invokerPID finds the long-lived process that invoked pickup: walking up
// from pickup's parent past shells, wrappers and pickup itself. For an agent
// that runs commands through a shell, that is the agent.
func invokerPID() int {
	pid := os.Getppid()
	first := pid
	for i := 0; i < 16 && pid > 1; i++ {
		comm, ppid, ok := readStat(pid)
		if !ok {
			break
		}
		if !transient[comm] {
			return pid
		}
		pid = ppid
	}
	return first
}

// transient names processes that come and go around a command: shells,
// wrappers, and pickup itself.
var transient = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "fish": true, "ksh": true, "mksh": true,
	"tcsh": true, "csh": true, "busybox": true, "env": true, "timeout": true, "nice": true,
	"nohup": true, "xargs": true, "time": true, "sudo": true, "su": true, "flock": true,
	"pickup": true, "make": true, "npm": true, "npx": true,
}

func readStat(pid int) (comm string, ppid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, false
	}
	open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || close < open {
		return "", 0, false
	}
	fields := strings.Fields(string(b[close+1:]))
	if len(fields) < 2 {
		return "", 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	if err != nil {
		return "", 0, false
	}
	return string(b[open+1 : close]), ppid, true
}
