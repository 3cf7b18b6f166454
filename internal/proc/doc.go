// Package proc identifies processes and tells whether a recorded process is
// still running, so that a lock or a lease whose holder died can be freed at
// once instead of after a timeout.
//
// A Process names a process by host, pid, start time and boot id. The pid
// alone is not enough: pids are reused, so a record also keeps the process's
// start time (field 22 of /proc/PID/stat, in clock ticks since boot) and the
// kernel's boot id, which changes at every boot.
//
// # Guarantees and limits
//
// Liveness answers Dead only for a process recorded on this host (same
// hostname) that provably no longer runs: the machine rebooted since (boot
// ids differ), no process has its pid (kill(pid, 0) fails with ESRCH), the
// pid now belongs to a process that started at another time, or the process
// is a zombie. A process on another host is Unknown: only heartbeats can tell
// whether it lives.
//
// The start time and boot id come from /proc, so they exist on Linux only.
// Elsewhere Start is 0 and BootID "", and liveness rests on kill(pid, 0)
// alone, which mistakes a new process that reused the pid for the old one.
// If /proc is not mounted or hides other users' processes, Linux degrades the
// same way: a process that kill(2) can see is never called Dead.
//
// "This host" means the same hostname and the same pid namespace. Two
// containers that share a hostname but not a pid namespace would misjudge
// each other's processes; containers normally get distinct hostnames.
package proc
