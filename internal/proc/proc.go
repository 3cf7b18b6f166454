package proc

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Process identifies one run of a process on one machine.
type Process struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Start is the start time in clock ticks since boot (field 22 of
	// /proc/PID/stat); 0 if unknown.
	Start uint64 `json:"start"`
	// BootID is /proc/sys/kernel/random/boot_id; "" if unknown.
	BootID string `json:"boot_id"`
}

func (p Process) String() string {
	if p.Host == "" {
		return fmt.Sprintf("pid %d", p.PID)
	}
	return fmt.Sprintf("pid %d on %s", p.PID, p.Host)
}

// ErrNotFound reports that no process has the pid, or that it has exited.
var ErrNotFound = errors.New("no such process")

// Liveness is what can be known about a recorded process.
type Liveness int

const (
	// Unknown: the process ran on another host (or its record lacks a
	// pid), so only its heartbeats can tell whether it still runs.
	Unknown Liveness = iota
	// Alive: the process runs on this host.
	Alive
	// Dead: the process ran on this host and has exited, or the machine
	// rebooted since.
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
// real system; tests replace the hostname or point ProcRoot at a fake tree.
type Env struct {
	// Hostname replaces os.Hostname.
	Hostname func() (string, error)
	// ProcRoot replaces "/proc" (Linux only).
	ProcRoot string
}

func (e Env) hostname() string {
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

// Self returns the identity of the calling process.
func Self() Process { return Env{}.Self() }

// Lookup returns the identity of the running process pid, or an error
// wrapping ErrNotFound if there is none.
func Lookup(pid int) (Process, error) { return Env{}.Lookup(pid) }

// Liveness tells whether p still runs, judged from the machine whose
// identity is local (normally Self()): only Host and BootID of local are
// used.
func (p Process) Liveness(local Process) Liveness { return Env{}.Liveness(p, local) }

// Self returns the identity of the calling process.
func (e Env) Self() Process {
	p, err := e.Lookup(os.Getpid())
	if err != nil {
		// Only a missing /proc gets here: keep what is certain.
		return Process{Host: e.hostname(), PID: os.Getpid(), BootID: e.bootID()}
	}
	return p
}

// Lookup returns the identity of the running process pid, or an error
// wrapping ErrNotFound if there is none (or it is a zombie).
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
	return Process{Host: e.hostname(), PID: pid, Start: st.start, BootID: e.bootID()}, nil
}

// Liveness tells whether p still runs, judged from the machine whose
// identity is local: Dead if p ran on this host and provably exited (or the
// machine rebooted since), Alive if it runs, Unknown if p ran elsewhere.
func (e Env) Liveness(p, local Process) Liveness {
	if p.PID <= 0 || p.Host != local.Host {
		return Unknown
	}
	if p.BootID != "" && local.BootID != "" && p.BootID != local.BootID {
		return Dead
	}
	switch err := signal0(p.PID); {
	case err == nil, errors.Is(err, syscall.EPERM):
		// It exists (EPERM: it belongs to another user).
	case errors.Is(err, syscall.ESRCH):
		return Dead
	default:
		return Unknown // this system cannot tell
	}
	st, err := e.stat(p.PID)
	if err != nil {
		// /proc is missing or hides the process, or it exited a moment
		// ago: trust kill(2), which said it exists. The next look will
		// see it dead.
		return Alive
	}
	if st.zombie {
		return Dead
	}
	if p.Start != 0 && st.start != 0 && st.start != p.Start {
		return Dead // the pid was reused
	}
	return Alive
}

// stat is what the process table says about one pid.
type stat struct {
	start  uint64 // 0 if unknown
	zombie bool
}
