// Package fsx holds the few filesystem primitives every board transition is
// built from: a rename that never replaces its target, directory fsync, and
// atomic file publication.
//
// # Guarantees
//
// RenameNoReplace moves a name in one step and fails with EEXIST rather than
// replace an existing target. Of any number of processes that race to move the
// same source, exactly one succeeds; the others see ENOENT. On Linux it is
// renameat2(RENAME_NOREPLACE), on macOS renamex_np(RENAME_EXCL). Where the
// filesystem lacks those calls it falls back to link(2)+unlink(2), which keeps
// the same winner-takes-all property but can leave the file under both names
// if the process dies between the two calls; such a file has a link count
// above one, which `pickup doctor` detects and mends.
//
// # Limits
//
// Both names must be on one filesystem: across filesystems rename(2) answers
// EXDEV and nothing moves. The guarantees are those of a local POSIX
// filesystem; network filesystems (NFS, SMB, most FUSE mounts) do not give
// them.
//
// # Durability
//
// A rename is atomic but not durable until the directories it touched reach
// the disk: after a crash the file may be back in its old directory, or (for a
// fresh file) absent. SyncDir fsyncs a directory so that a completed transition
// survives power loss; callers may skip it when speed matters more.
package fsx
