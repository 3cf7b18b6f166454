// Package sharedways tests the shared board (pickup init --shared) the way
// teams use it: several clones of one repository, each with several agent
// processes, against a bare remote served by a real `git daemon` on
// loopback and through file://. Every pickup call is a real process of
// the real binary; git is the real git. No mocks.
package sharedways
