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
)

func (e Env) stat(pid int) (stat, error) {
	b, err := os.ReadFile(filepath.Join(e.procRoot(), strconv.Itoa(pid), "stat"))
	if errors.Is(err, fs.ErrNotExist) {
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
	// Fields from 3 (state) on; starttime is field 22.
	f := strings.Fields(string(b[i+1:]))
	const state, starttime = 3 - 3, 22 - 3
	if len(f) <= starttime {
		return stat{}, fmt.Errorf("parse process stat: %d fields, want at least %d", len(f)+2, starttime+3)
	}
	start, err := strconv.ParseUint(f[starttime], 10, 64)
	if err != nil {
		return stat{}, fmt.Errorf("parse process stat: start time: %w", err)
	}
	return stat{start: start, zombie: f[state] == "Z" || f[state] == "X"}, nil
}

func (e Env) bootID() string {
	b, err := os.ReadFile(filepath.Join(e.procRoot(), "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
