package fsx

import "io/fs"

// DirEntry is a directory entry as the kernel reports it, without a stat per
// file: the inode number lets a cache notice that a name now refers to a
// different file (an atomic rewrite gives the name a new inode).
type DirEntry struct {
	Name string
	Ino  uint64
	Type fs.FileMode // fs.ModeDir, fs.ModeSymlink, 0 for regular files, fs.ModeIrregular if unknown
}
