//go:build !linux

package claim

import (
	"io/fs"
	"time"
)

func changeTime(info fs.FileInfo) time.Time { return info.ModTime() }
