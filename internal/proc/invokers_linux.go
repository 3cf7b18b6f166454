package proc

import (
	"path/filepath"
	"strings"
)

// maxInvokers bounds the walk up the process tree.
const maxInvokers = 32

// Invokers returns the processes that the caller's work depends on, nearest
// first: its parent, and past every process that only passes work on, the
// first one that does work of its own, or the interactive shell it was
// typed at. A lease tied to all of them lives as long as any of them runs.
// Each one's Why says why it was taken.
//
// The rule, by what each process runs (its executable), never by its name,
// and by the process group and session that job control gave it:
//
//   - An interactive shell that reads a terminal (see readsTerminal) ends
//     the walk: the terminal it serves (tmux, a terminal emulator, an IDE,
//     sshd) is not an agent. It is taken only when pickup was typed at its
//     prompt: no shell of a job of its own stands between it and pickup
//     (a job-control shell puts every job in a process group of its own).
//     A script, subshell or `sh -c` in a job started from the prompt is
//     the agent; the prompt's shell outlives it and is not taken.
//   - Any other shell (sh, bash, dash, zsh, ...) is passed: it runs
//     commands for someone else. This covers a script run by its shebang
//     (whose name is the script's), every forked subshell of it
//     ("( ... ) &", "$( ... )", the elements of a pipeline), and a `sh -c`
//     that xargs, make or an agent started.
//   - A wrapper that runs one command and waits for it or becomes it (env,
//     timeout, nohup, setsid, xargs, sudo, flock, ...) is passed.
//   - The system's init (pid 1 of the machine's first pid namespace) and
//     other adopters of orphans (systemd, tini, ...) end the walk and are
//     not taken: a process they adopted has lost its invoker, and a service
//     they started is its own invoker.
//   - Any other process ends the walk and is taken: an agent (Claude Code,
//     a Python program, make), pickup itself (work, lock run), a terminal
//     that runs a command with no interactive shell between.
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
	jobShell := map[int]bool{} // process groups that hold a shell passed on the way
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
		p := Process{Host: host, PidNS: ns, PID: pid, Start: st.start, BootID: boot, Exe: exe}
		if role == shell && e.readsTerminal(pid, st) {
			if !jobOf(jobShell, st.pgrp) {
				p.Why = WhyPrompt
				out = append(out, p)
			}
			break
		}
		p.Why = whyOf[role]
		out = append(out, p)
		if role == shell {
			jobShell[st.pgrp] = true
		}
		if role != shell && role != wrapper {
			break
		}
		pid = st.ppid
	}
	return out
}

// jobOf reports whether a shell passed on the way ran in a process group
// other than the terminal shell's, whose group is pgrp: in a job started
// from its prompt. A shell in its own group (a command substitution typed at
// the prompt) is the prompt's own.
func jobOf(jobShell map[int]bool, pgrp int) bool {
	for g := range jobShell {
		if g != pgrp {
			return true
		}
	}
	return false
}

type role int

const (
	worker  role = iota // does work of its own: the walk stops there
	shell               // a shell: passes work on, or reads a terminal
	wrapper             // runs one command: passes work on
	adopter             // init or a subreaper: not an invoker
)

var whyOf = map[role]string{worker: WhyProgram, shell: WhyShell, wrapper: WhyWrapper}

// roleOf judges a process by its executable's file name. An executable that
// cannot be read is a worker: stopping there keeps the lease tied to a
// process that is certainly pickup's ancestor.
func roleOf(exe string) role {
	name := filepath.Base(exe)
	if exe == "" {
		return worker
	}
	if shells[name] {
		return shell
	}
	if wrappers[name] {
		return wrapper
	}
	if adopters[name] || strings.HasPrefix(name, "containerd-shim") {
		return adopter
	}
	return worker
}

var shells = map[string]bool{
	"sh": true, "bash": true, "rbash": true, "dash": true, "ash": true, "hush": true, "zsh": true,
	"fish": true, "ksh": true, "ksh93": true, "mksh": true, "pdksh": true, "oksh": true, "yash": true,
	"posh": true, "tcsh": true, "csh": true, "busybox": true, "toybox": true,
}

// wrappers run one command and wait for it, or become it.
var wrappers = map[string]bool{
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
