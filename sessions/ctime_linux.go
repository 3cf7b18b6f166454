package sessions

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime is when the file's inode last changed: a rename sets it, so
// it tells when a session last moved.
func changeTime(info fs.FileInfo) time.Time {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)) // int32 on 32-bit platforms
	}
	return info.ModTime()
}
