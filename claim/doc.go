// Package claim moves sessions between the states of a board: claim, release,
// done, reopen and next.
//
// Every transition is one rename(2) that never replaces its target
// (renameat2 RENAME_NOREPLACE on Linux, renamex_np RENAME_EXCL on macOS,
// link+unlink elsewhere). The session's place is its state and its owner, so
// a successful rename is the whole transition: of any number of processes
// racing to claim one session exactly one wins, and the others get
// ErrSessionNotAvailable, which is a normal outcome, not a failure. A rename
// that finds its destination taken fails with ErrConflict and moves nothing.
//
// Unless the board is in NoSync mode, both directories a rename touched are
// fsynced before a transition returns, so a completed transition survives a
// crash or power loss.
//
// The guarantees hold on one local filesystem. A board whose state
// directories are on different filesystems gets ErrCrossDevice; network
// filesystems do not give rename's atomicity.
package claim
