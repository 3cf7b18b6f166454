package proc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// readsTerminal reports whether shell process pid, whose stat is st, is an
// interactive shell reading a terminal with job control, from evidence
// that a script cannot give:
//
//   - it leads its process group (a job-control shell makes itself the
//     leader of one, and puts each job it starts in another);
//   - it has a controlling terminal, and its standard input is that very
//     terminal (the same device);
//   - its command line names no script and no -c command: it reads its
//     commands from that input (`bash -i`, `-bash`, `zsh -l`, `dash -i`).
//
// Anything that cannot be read (another user's process, a hidden /proc)
// is no proof: the shell is then passed and taken, as any shell.
func (e Env) readsTerminal(pid int, st stat) bool {
	if st.pgrp != pid || st.session <= 0 || st.tty == 0 {
		return false
	}
	dir := filepath.Join(e.procRoot(), strconv.Itoa(pid))
	info, err := os.Stat(filepath.Join(dir, "fd", "0")) // the open file itself, not the link
	if err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	sys, ok := info.Sys().(*syscall.Stat_t)
	if !ok || uint64(sys.Rdev) != st.tty {
		return false
	}
	b, err := readProc(filepath.Join(dir, "cmdline"))
	if err != nil {
		return false
	}
	args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
	if name := filepath.Base(e.exe(pid)); name == "busybox" || name == "toybox" {
		// A multi-call binary runs what its argv[0] names.
		if !shells[strings.TrimPrefix(filepath.Base(args[0]), "-")] {
			return false
		}
	}
	return readsInput(args)
}

// readsInput reports whether a shell's arguments leave it reading commands
// from its standard input: options only, no script operand, no -c. An
// argument it cannot place counts as a script: no proof.
func readsInput(args []string) bool {
	if len(args) == 0 || args[0] == "" {
		return false
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-":
			return false // what follows is a script operand
		case strings.HasPrefix(a, "--"):
			if a == "--rcfile" || a == "--init-file" {
				i++ // its value
			}
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			flags := a[1:]
			if strings.ContainsRune(flags, 'c') {
				return false // a command string
			}
			if strings.ContainsRune(flags, 's') {
				return true // commands from the input; the rest are its arguments
			}
			if strings.ContainsAny(flags, "oO") {
				i++ // -o NAME, -O NAME
			}
		default:
			return false // a script
		}
	}
	return true
}
