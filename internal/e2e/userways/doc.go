// Package userways holds black-box tests that start the real pickup binary
// the ways its users do: an executable bash script with background subshell
// loops, xargs -P, make -j, Python thread and process pools, nohup and
// setsid, `next --wait` waiters, and pid namespaces made by unshare and
// bwrap.
//
// pickup promises that each session is worked by exactly one live agent,
// however pickup is started. An owner's lease follows a process; if pickup
// judges that process dead, the owner's claims are reaped and its later
// `pickup done` fails with exit 6. These tests drain real boards through
// real shells, interpreters and namespaces, and check that no claim was ever
// reaped from a live worker: every session handed out exactly once, every
// `done` succeeded, events.log records no "reap", and done/ holds every
// session.
//
// The package has no code of its own; its tests live in *_test.go, and the
// scripts they run in testdata/.
package userways
