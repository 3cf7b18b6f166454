package fsx

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestAppendIsAtomic(t *testing.T) {
	tests := []struct {
		name   string
		dir    string // a file is made here
		file   string // or this existing file is opened
		fsType int64  // the test is skipped unless dir is of this type
		want   bool
	}{
		{name: "tmpfs", dir: "/dev/shm", fsType: unix.TMPFS_MAGIC, want: true},
		{name: "ext4", dir: os.TempDir(), fsType: unix.EXT4_SUPER_MAGIC, want: true},
		{name: "procfs", file: "/proc/self/status", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.file
			if tt.dir != "" {
				var st unix.Statfs_t
				if err := unix.Statfs(tt.dir, &st); err != nil || int64(st.Type) != tt.fsType {
					t.Skipf("%s is not %s here", tt.dir, tt.name)
				}
				f, err := os.CreateTemp(tt.dir, "fsx-append-*")
				if err != nil {
					t.Skipf("cannot write in %s: %v", tt.dir, err)
				}
				f.Close()
				t.Cleanup(func() { os.Remove(f.Name()) })
				path = f.Name()
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got := AppendIsAtomic(int(f.Fd())); got != tt.want {
				t.Errorf("AppendIsAtomic(%s) = %v, want %v", path, got, tt.want)
			}
		})
	}
}
