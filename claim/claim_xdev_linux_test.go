package claim_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

func TestClaimCrossDevice(t *testing.T) {
	const shm = "/dev/shm"
	b := pkBoard(t)
	var boardSt, shmSt syscall.Stat_t
	if err := syscall.Stat(b.Dir, &boardSt); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(shm, &shmSt); err != nil {
		t.Skipf("no %s to put doing/ on another filesystem: %v", shm, err)
	}
	if boardSt.Dev == shmSt.Dev {
		t.Skipf("%s is on the same device as %s", shm, b.Dir)
	}
	other, err := os.MkdirTemp(shm, "pickup-xdev-")
	if err != nil {
		t.Skipf("cannot create a directory in %s: %v", shm, err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	// doing/ on the other filesystem: a mount point inside the board (a
	// link would be refused before anything moves, see
	// TestClientRefusesLinkedOwnerDir), which takes root.
	doing := b.StateDir(sessions.Doing, "")
	if err := syscall.Mount(other, doing, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount %s on doing/ (needs root): %v", other, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(doing, syscall.MNT_DETACH) })
	content := pkPut(t, b, sessions.Todo, "", "x", sessions.Meta{})
	c := pkClient(t, b, "alice")
	for _, op := range []struct {
		name string
		do   func() error
	}{
		{"claim", func() error { _, err := c.Claim(context.Background(), "x"); return err }},
		{"next", func() error { _, err := c.Next(context.Background()); return err }},
	} {
		t.Run(op.name, func(t *testing.T) {
			err := op.do()
			if !errors.Is(err, claim.ErrCrossDevice) {
				t.Fatalf("%s across filesystems = %v, want ErrCrossDevice", op.name, err)
			}
			got, rerr := os.ReadFile(b.Path(sessions.Todo, "", "x"))
			if rerr != nil || !bytes.Equal(got, content) {
				t.Errorf("session x is no longer intact in todo: %v", rerr)
			}
			if _, serr := os.Lstat(filepath.Join(other, "alice", "x.md")); !errors.Is(serr, fs.ErrNotExist) {
				t.Errorf("a copy of x appeared on the other filesystem: %v", serr)
			}
		})
	}
}
