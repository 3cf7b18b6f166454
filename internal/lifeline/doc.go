// Package lifeline makes the commands that pickup starts die with pickup,
// each with its whole process group, even when pickup is killed with
// SIGKILL and so has no chance to clean up.
//
// # Why
//
// A session that `pickup work` runs counts as pickup's until pickup dies;
// then another agent recovers it at once and may start it again. Were the
// first run's command (or a child it forked) still running, the session
// would be worked twice at the same time. The same holds for the command of
// a `pickup lock run` and the lock it loses when pickup dies.
//
// # How
//
// Each command is started in a new process group of its own, so that pickup
// can signal and kill everything a command started, not only its first
// process.
//
// Start runs one watchdog process per pickup run: pickup's own executable
// run again with the hidden first argument Arg, in a process group of its
// own (so that a Ctrl-C or Ctrl-Z typed in pickup's terminal never reaches
// it) and ignoring the signals that would stop or end it early. Its standard
// input is a pipe whose only writer is pickup. For each group it starts,
// pickup writes "+PGID"; when the group is gone, "-PGID". End of file on the
// pipe means pickup has exited, however it died, because the kernel closes
// the files of a dead process: the watchdog then sends SIGKILL to every
// group still listed, waits until they are empty, and exits.
//
// A group must be listed before its command can start a process of its
// own. pickup learns the command's pid only once the command runs, and
// may be slow to write it down (milliseconds, on a busy machine: long
// enough for a shell to fork). So each command's process starts as a gate,
// pickup's executable run with ArgGate, which waits until pickup has listed
// its group and then execs the command in its place. If pickup dies first,
// the gate reads end of file and the command never runs. On Linux the
// kernel also kills the command if pickup dies (PR_SET_PDEATHSIG).
//
// A gate that cannot exec its command (not there, not executable) exits
// 127 or 126 as a shell would, but a command may exit so itself; so the
// gate also writes the errno on a second pipe, which a successful exec
// closes unwritten: Group.StartErr reads it, and pickup tells a command
// that never ran (the caller's mistake) from one that failed.
//
// When a command's first process exits, Group.End kills what is left of its
// group and waits until the group is empty before the run counts as over:
// a background child that a command leaves behind never outlives its run.
//
// A binary that starts watchdogs or gates serves as one when its first
// argument is Arg or ArgGate: it calls RunRole (through internal/roles)
// first thing in main, or in a test binary's TestMain, before it parses any
// argument, so pickup, its test binaries and anything else that embeds
// pickup's CLI all work alike. No init function takes over the process.
//
// # Guarantees
//
// Once Lifeline.Start has returned a Group, every process of that group is
// killed (SIGKILL) when pickup exits or dies, SIGKILL included, and the
// watchdog exits only after the group is empty. Processes that have exited
// but wait to be reaped (zombies) do no work and count as gone.
//
// # Limits
//
//   - A process that leaves its group (setsid or setpgid; daemons do so on
//     purpose) is no longer followed. A pickup run by a command (a `lock
//     run` in a `work` command) puts its own commands in groups of their
//     own: they die when that pickup dies, by the hand of its own watchdog,
//     a moment after the outer group is empty, not before.
//   - If the watchdog itself is killed (SIGKILL by hand, the OOM killer),
//     only PR_SET_PDEATHSIG is left: on Linux it kills a command's first
//     process but not the processes that one started; elsewhere nothing.
//     pickup warns when it notices.
//   - A process in uninterruptible sleep (a hung network file system) dies
//     only when it wakes up; waits for a group to empty are bounded and
//     report it.
//   - A group id is reused only after the group is empty and the pid space
//     has wrapped around; pickup unlists a group right after it is empty,
//     so the watchdog's SIGKILL cannot reach a newcomer unless pickup dies
//     in the instant between the two.
//   - Elsewhere than Linux (macOS, the BSDs), zombies cannot be told apart
//     from live processes without /proc, so a group counts as empty only
//     once its zombies are reaped (launchd and init do so at once); and
//     without PR_SET_PDEATHSIG a command started with a nil *Lifeline is
//     not killed when pickup dies. These have only been compiled there, not
//     run.
//   - If the watchdog cannot start (no /proc/self/exe, exec denied), pickup
//     runs its commands with a nil *Lifeline: process groups, cleanup after
//     each command and signal forwarding as usual, but if pickup is killed
//     only PR_SET_PDEATHSIG (Linux) kills the commands' first processes.
//     pickup says so when it starts.
package lifeline
