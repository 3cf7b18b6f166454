// Package proc identifies processes and tells, from conclusive evidence
// only, whether a recorded process still runs, so that a lease or a lock
// whose holder died can be freed at once instead of after a timeout, and so
// that one whose holder lives is never freed.
//
// A Process names a process by host, boot id, pid namespace, pid and start
// time. The pid alone is not enough: pids are reused, so a record also keeps
// the process's start time (field 22 of /proc/PID/stat, in clock ticks since
// boot) and the kernel's boot id, which changes at every boot. A pid means
// something only in the pid namespace that numbered it: a sandbox
// (bubblewrap, a container, `unshare --pid`) numbers its processes anew, and
// its pid 2 is some other process outside. So a record also keeps the inode
// of that namespace (/proc/self/ns/pid).
//
// # Guarantees and limits
//
// Liveness answers Dead only when it can prove the process is gone: it was
// recorded on this host (same hostname) and the machine rebooted since (the
// boot ids differ), or it was recorded in the judge's own pid namespace and
// no process has its pid (kill(pid, 0) fails with ESRCH), the pid now
// belongs to a process that started at another time, or the process is a
// zombie. Anything else is not proof: a process of another host, of another
// pid namespace, or of a record that lacks its namespace is Unknown, and so
// is everything when /proc is not this namespace's own (a sandbox that did
// not mount a new /proc): only heartbeats can tell whether it lives. A pid
// that kill(2) can see but /proc hides (hidepid) is Alive: when in doubt, a
// claim stays where it is. It reads /proc before it asks kill(2), so that a
// process that exits and is reaped while it is judged is seen dead by one
// of the two looks, never taken for a hidden one.
//
// The start time, boot id and namespace come from /proc, so they exist on
// Linux only. Elsewhere Start is 0, BootID "" and PidNS 0, and liveness
// rests on kill(pid, 0) alone, which mistakes a new process that reused the
// pid for the old one.
//
// "This host" means the same hostname. Two machines that share a board
// directory (a network filesystem) and a hostname would misjudge each
// other's processes as rebooted.
//
// Invokers finds the processes that started the caller, judged by what they
// run (/proc/PID/exe), never by their names, and by the process group and
// terminal that job control gave them: a job started from an interactive
// shell is the job's, not the shell's nor its terminal's; a command typed
// at the prompt is the shell's. See its doc for the rule. When the evidence
// cannot be read, a shell is taken, as any shell: in doubt a claim stays.
// It walks /proc, so only Linux has it; elsewhere it returns the parent
// alone, and a shell that ran pickup stands for whatever ran the shell.
package proc
