// Package sessions reads and writes a pickup board: the session files, their
// ids and frontmatter, and the ordered listing of each state.
//
// A board is a directory with one subdirectory per state:
//
//	<board>/todo/<id>.md            waiting
//	<board>/doing/<owner>/<id>.md   claimed by <owner>
//	<board>/done/<id>.md            finished
//
// A session's place is its state and, while it is claimed, its owner. This
// package never moves a session between states; package claim does, with
// one no-replace rename per transition. What this package guarantees is that
// a session file is never half-written (files are published atomically and
// exclusively: nothing is ever overwritten), that two sessions never get the
// same generated id, and that listing never follows symlinks, never lists
// dotfiles, temporary files or directories, and never fails because a file
// moved while it was being read.
//
// Listing a big board does not parse every file every time: what ordering
// needs is cached under <board>/.pickup/cache, keyed by file name and inode
// number (which survives a rename between states but changes whenever a file
// is replaced by an atomic rewrite), and List revalidates entries against
// their size and modification time.
package sessions
