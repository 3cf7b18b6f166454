package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Process identifies one run of a process on one machine.
type Process struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// PidNS is the inode of the pid namespace whose numbering PID is in
	// (Linux); 0 if unknown or if the system has no pid namespaces.
	PidNS uint64 `json:"pid_ns,omitempty"`
	// Start is the start time in clock ticks since boot (field 22 of
	// /proc/PID/stat); 0 if unknown.
	Start uint64 `json:"start"`
	// BootID is /proc/sys/kernel/random/boot_id; "" if unknown.
	BootID string `json:"boot_id"`
	// Exe is what the process runs (/proc/PID/exe), for people reading a
	// record; it plays no part in identity.
	Exe string `json:"exe,omitempty"`
	// Why says why the process was taken as working for an owner (the
	// Why* values), for people reading a lease; no part of identity.
	Why string `json:"why,omitempty"`
}

// Same reports whether p and q name the same run of the same process: Exe
// and Why aside, every field agrees.
func (p Process) Same(q Process) bool {
	p.Exe, q.Exe = "", ""
	p.Why, q.Why = "", ""
	return p == q
}

func (p Process) String() string {
	s := fmt.Sprintf("pid %d", p.PID)
	if p.Exe != "" {
		s += " (" + filepath.Base(p.Exe) + ")"
	}
	if p.Host != "" {
		s += " on " + p.Host
	}
	return s
}

// Why a process was taken as working for an owner, as Invokers and pickup's
// command line record it in Process.Why.
const (
	WhyShell   = "shell that ran pickup (a script, a subshell of it, sh -c)"
	WhyWrapper = "wrapper that runs the command that ran pickup"
	WhyProgram = "program that ran pickup"
	WhyPrompt  = "interactive shell pickup was typed at (kept while it runs)"
	WhyParent  = "pickup's parent (no process table to walk further)"
	WhyFlagPID = "named by --pid"
	WhyEnvPID  = "named by $PICKUP_PID"
)

// ErrNotFound reports that no process has the pid, or that it has exited.
var ErrNotFound = errors.New("no such process")

// Liveness is what can be known about a recorded process.
type Liveness int

const (
	// Unknown: nothing conclusive can be said from here (another host,
	// another pid namespace, an incomplete record, no usable /proc): only
	// its heartbeats can tell whether it still runs.
	Unknown Liveness = iota
	// Alive: the process runs.
	Alive
	// Dead: the process provably no longer runs.
	Dead
)

func (l Liveness) String() string {
	switch l {
	case Alive:
		return "alive"
	case Dead:
		return "dead"
	}
	return "unknown"
}

// Env is where process information comes from. The zero value reads the
// real system; tests replace the hostname, point ProcRoot at a fake tree
// and set PID to the process the fake tree calls "self".
type Env struct {
	// Hostname replaces os.Hostname.
	Hostname func() (string, error)
	// ProcRoot replaces "/proc" (Linux only).
	ProcRoot string
	// PID replaces os.Getpid() as the calling process.
	PID int
	// Signal0 replaces kill(pid, 0), which tells whether a pid exists.
	Signal0 func(pid int) error

	// memo, set by Memoized, keeps what this Env learns of the calling
	// process and its machine.
	memo *memo
}

// memo holds what cannot change while a process runs (its own start time,
// pid namespace and executable, the machine's boot id), and its host name,
// each read at most once.
type memo struct {
	hostOnce, bootOnce, nsOnce, selfOnce sync.Once
	host, boot                           string
	ns                                   uint64
	self                                 Process
}

// Memoized returns e reading what it knows of the calling process and its
// machine (Self, the host name, boot id and pid namespace) once, for every
// copy of the result. A pickup command asks for them again and again:
// registering its lease, judging other owners' processes, walking up to its
// invoker; each was several reads of /proc. Meant for one command's run:
// a host name changed meanwhile is not seen.
func (e Env) Memoized() Env {
	e.memo = &memo{}
	return e
}

func (e Env) hostname() string {
	if m := e.memo; m != nil {
		m.hostOnce.Do(func() { m.host = e.readHostname() })
		return m.host
	}
	return e.readHostname()
}

func (e Env) bootID() string {
	if m := e.memo; m != nil {
		m.bootOnce.Do(func() { m.boot = e.readBootID() })
		return m.boot
	}
	return e.readBootID()
}

func (e Env) ownNamespace() uint64 {
	if m := e.memo; m != nil {
		m.nsOnce.Do(func() { m.ns = e.readOwnNamespace() })
		return m.ns
	}
	return e.readOwnNamespace()
}

func (e Env) readHostname() string {
	f := e.Hostname
	if f == nil {
		f = os.Hostname
	}
	h, err := f()
	if err != nil {
		return ""
	}
	return h
}

func (e Env) procRoot() string {
	if e.ProcRoot == "" {
		return "/proc"
	}
	return e.ProcRoot
}

func (e Env) pid() int {
	if e.PID > 0 {
		return e.PID
	}
	return os.Getpid()
}

// Self returns the identity of the calling process.
func Self() Process { return Env{}.Self() }

// Lookup returns the identity of the running process pid, or an error
// wrapping ErrNotFound if there is none.
func Lookup(pid int) (Process, error) { return Env{}.Lookup(pid) }

// Liveness tells whether p still runs, judged from the machine and pid
// namespace whose identity is local (normally Self()): only Host, BootID and
// PidNS of local are used.
func (p Process) Liveness(local Process) Liveness { return Env{}.Liveness(p, local) }

// Self returns the identity of the calling process.
func (e Env) Self() Process {
	if m := e.memo; m != nil {
		m.selfOnce.Do(func() { m.self = e.readSelf() })
		return m.self
	}
	return e.readSelf()
}

func (e Env) readSelf() Process {
	p, err := e.Lookup(e.pid())
	if err != nil {
		// Only a missing or foreign /proc gets here: keep what is
		// certain; without a namespace the record proves nothing.
		return Process{Host: e.hostname(), PID: e.pid(), BootID: e.bootID()}
	}
	return p
}

// Lookup returns the identity of the running process pid, numbered in the
// caller's pid namespace, or an error wrapping ErrNotFound if there is none
// (or it is a zombie).
func (e Env) Lookup(pid int) (Process, error) {
	if pid <= 0 {
		return Process{}, fmt.Errorf("look up process %d: %w", pid, ErrNotFound)
	}
	st, err := e.stat(pid)
	if err == nil && st.zombie {
		err = ErrNotFound
	}
	if err != nil {
		return Process{}, fmt.Errorf("look up process %d: %w", pid, err)
	}
	return Process{Host: e.hostname(), PidNS: e.ownNamespace(), PID: pid, Start: st.start, BootID: e.bootID(), Exe: e.exe(pid)}, nil
}

// Liveness tells whether p still runs, judged from the machine and pid
// namespace whose identity is local: Dead only on proof (see the package
// doc), Alive if it runs, Unknown if that cannot be known from here.
func (e Env) Liveness(p, local Process) Liveness {
	if p.PID <= 0 || p.Host != local.Host {
		return Unknown
	}
	if p.BootID != "" && local.BootID != "" && p.BootID != local.BootID {
		return Dead // the machine rebooted: every process of then is gone
	}
	if !comparable(p, local) {
		return Unknown
	}
	// /proc first, kill(2) after. A process that exits and is reaped
	// between the two looks is then seen dead by one of them: a zombie or
	// another start time in /proc, or no such pid for kill(2). The other
	// order saw it exist (a zombie), then missing from /proc, and took
	// that for a process /proc hides: alive, though it had exited.
	st, err := e.stat(p.PID)
	if err == nil && st.zombie {
		return Dead
	}
	if err == nil && p.Start != 0 && st.start != 0 && st.start != p.Start {
		return Dead // the pid was reused
	}
	switch err := e.signal0(p.PID); {
	case err == nil, errors.Is(err, syscall.EPERM):
		// It exists (EPERM: it belongs to another user). If /proc did
		// not show it, /proc hides it (hidepid): a claim stays where it
		// is when in doubt.
		return Alive
	case errors.Is(err, syscall.ESRCH):
		return Dead
	default:
		return Unknown // this system cannot tell
	}
}

func (e Env) signal0(pid int) error {
	if e.Signal0 != nil {
		return e.Signal0(pid)
	}
	return signal0(pid)
}

// stat is what the process table says about one pid.
type stat struct {
	start  uint64 // 0 if unknown
	ppid   int
	zombie bool
	// pgrp and session are its process group and session (0 if
	// unknown); tty is its controlling terminal's device number (0: none
	// or unknown).
	pgrp, session int
	tty           uint64
}
