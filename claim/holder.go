package claim

import "github.com/pickup-dev/pickup/internal/proc"

// Holder is one run of one process that works for an owner (Lease.Holders)
// or holds a lock (LockInfo.Process). A run is named by its host, its pid
// in a pid namespace and its start time, so that a pid the system gave to a
// later process never passes for the recorded one; pickup judges a holder
// on this host alive or dead from that, and one on another host by
// heartbeats alone.
type Holder struct {
	// Host is the machine's host name.
	Host string `json:"host"`
	// PID is the process id, in the pid namespace PidNS.
	PID int `json:"pid"`
	// PidNS is the inode of the pid namespace whose numbering PID is in
	// (Linux); 0 if unknown or if the system has no pid namespaces.
	PidNS uint64 `json:"pid_ns,omitempty"`
	// Start is the process's start time in clock ticks since boot (field 22
	// of /proc/PID/stat); 0 if unknown.
	Start uint64 `json:"start"`
	// BootID is /proc/sys/kernel/random/boot_id; "" if unknown.
	BootID string `json:"boot_id"`
	// Exe is what the process runs (/proc/PID/exe), for people reading a
	// record; it plays no part in identity.
	Exe string `json:"exe,omitempty"`
	// Why says why the process was taken as working for its owner, for
	// people reading a lease; it plays no part in identity.
	Why string `json:"why,omitempty"`
}

// Same reports whether h and o name the same run of the same process (Exe
// and Why aside, every field agrees).
func (h Holder) Same(o Holder) bool { return proc.Process(h).Same(proc.Process(o)) }

// String names h for people: "pid 42 (claude) on host".
func (h Holder) String() string { return proc.Process(h).String() }

// holdersOf converts processes found by internal/proc into holders.
func holdersOf(ps []proc.Process) []Holder {
	if ps == nil {
		return nil
	}
	hs := make([]Holder, len(ps))
	for i, p := range ps {
		hs[i] = Holder(p)
	}
	return hs
}

// processesOf converts holders back into internal/proc's processes.
func processesOf(hs []Holder) []proc.Process {
	if hs == nil {
		return nil
	}
	ps := make([]proc.Process, len(hs))
	for i, h := range hs {
		ps[i] = proc.Process(h)
	}
	return ps
}
