package proc

import (
	"path/filepath"
	"strings"
)

// maxInvokers bounds the walk up the process tree.
const maxInvokers = 32

// Invokers returns the processes that the caller's work depends on, nearest
// first: its parent, and past every process that only passes work on, the
// first one that does work of its own. A lease tied to all of them lives as
// long as any of them runs.
//
// The rule, by what each process runs (its executable), never by its name:
//
//   - A shell (sh, bash, dash, zsh, ...) is passed: it runs commands for
//     someone else. This covers a script run by its shebang (whose name is
//     the script's), every forked subshell of it ("( ... ) &", "$( ... )",
//     the elements of a pipeline), a `sh -c` that xargs, make or an agent
//     started, and an interactive shell.
//   - A wrapper that runs one command and waits for it or becomes it (env,
//     timeout, nohup, setsid, xargs, sudo, flock, ...) is passed.
//   - The system's init (pid 1 of the machine's first pid namespace) and
//     other adopters of orphans (systemd, tini, ...) end the walk and are
//     not taken: a process they adopted has lost its invoker, and a service
//     they started is its own invoker.
//   - Any other process ends the walk and is taken: an agent (Claude Code,
//     a Python program, make), a terminal, pickup itself (work, lock run).
//
// Every process passed is taken too: a subshell loop outlives the command
// substitution inside it, and a script's loops may outlive the script.
//
// It returns nil when nothing can be known: no /proc, or a /proc that is not
// the caller's pid namespace's.
func (e Env) Invokers() []Process {
	ns := e.ownNamespace()
	if ns == 0 {
		return nil
	}
	self, err := e.stat(e.pid())
	if err != nil {
		return nil
	}
	host, boot := e.hostname(), e.bootID()
	var out []Process
	pid := self.ppid
	for range maxInvokers {
		if pid <= 0 || (pid == 1 && ns == initialPidNS) {
			break
		}
		st, err := e.stat(pid)
		if err != nil || st.zombie {
			break // gone while we looked: nothing above it is ours
		}
		exe := e.exe(pid)
		role := roleOf(exe)
		if role == adopter {
			break
		}
		out = append(out, Process{Host: host, PidNS: ns, PID: pid, Start: st.start, BootID: boot, Exe: exe})
		if role != passer {
			break
		}
		pid = st.ppid
	}
	return out
}

type role int

const (
	worker  role = iota // does work of its own: the walk stops there
	passer              // a shell or wrapper: passes work on
	adopter             // init or a subreaper: not an invoker
)

// roleOf judges a process by its executable's file name. An executable that
// cannot be read is a worker: stopping there keeps the lease tied to a
// process that is certainly pickup's ancestor.
func roleOf(exe string) role {
	name := filepath.Base(exe)
	if exe == "" {
		return worker
	}
	if passers[name] {
		return passer
	}
	if adopters[name] || strings.HasPrefix(name, "containerd-shim") {
		return adopter
	}
	return worker
}

var passers = map[string]bool{
	// shells
	"sh": true, "bash": true, "rbash": true, "dash": true, "ash": true, "hush": true, "zsh": true,
	"fish": true, "ksh": true, "ksh93": true, "mksh": true, "pdksh": true, "oksh": true, "yash": true,
	"posh": true, "tcsh": true, "csh": true, "busybox": true, "toybox": true,
	// wrappers: run one command and wait for it, or become it
	"env": true, "timeout": true, "nice": true, "nohup": true, "setsid": true, "stdbuf": true,
	"xargs": true, "flock": true, "time": true, "sudo": true, "su": true, "doas": true,
	"runuser": true, "chrt": true, "ionice": true, "taskset": true, "unbuffer": true,
	"chroot": true, "nsenter": true, "unshare": true, "setpriv": true, "prlimit": true,
	"script": true, "bwrap": true, "strace": true, "ltrace": true,
}

var adopters = map[string]bool{
	"init": true, "systemd": true, "tini": true, "tini-static": true, "dumb-init": true,
	"catatonit": true, "docker-init": true, "s6-svscan": true, "s6-supervise": true,
	"runsv": true, "runsvdir": true,
}
