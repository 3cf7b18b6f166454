package claim_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sys/unix"
)

// TestFullDiskHistory runs transitions on a board whose disk is full: a
// small tmpfs, filled to the last page. Renames need no space, so every
// transition happens; appends to events.log go on until its last page is
// full, one is cut part-way at the page's end, and the rest fail. The log
// holds no torn line, doctor reports every session whose move it missed,
// and once there is space again doctor --fix records them.
func TestFullDiskHistory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs and fill it")
	}
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m,mode=0755"); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Skipf("root, but not allowed to mount (a container without CAP_SYS_ADMIN?): %v", err)
		}
		t.Fatalf("mount a tmpfs on %s: %v", mnt, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	b, err := sessions.Init(filepath.Join(mnt, "board"))
	if err != nil {
		t.Fatal(err)
	}
	ids := pkSeed(t, b, 40)
	news := make([]sessions.Event, len(ids))
	for i, id := range ids {
		news[i] = sessions.Event{Op: "new", ID: id, Dst: b.Path(sessions.Todo, "", id)}
	}
	if err := b.OpenEventLog().Record(news...); err != nil {
		t.Fatal(err)
	}
	c, err := claim.New(b, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(context.Background(), ids[0]); err != nil { // doing/alice/ exists from here on
		t.Fatal(err)
	}

	filler := filepath.Join(mnt, "filler")
	fillDisk(t, filler)
	for _, id := range ids[1:] {
		if _, err := c.Claim(context.Background(), id); err != nil {
			t.Fatalf("claim %s on a full disk: %v", id, err)
		}
		if _, err := c.Done(context.Background(), id); err != nil {
			t.Fatalf("done %s on a full disk: %v", id, err)
		}
	}

	data, err := os.ReadFile(b.EventLogPath())
	if err != nil {
		t.Fatal(err)
	}
	pkCheckNoTornLine(t, data)
	gaps := pkGaps(t, b)
	if len(gaps) == 0 {
		t.Fatal("every move was recorded: the disk was not full")
	}
	findings, err := b.Check(false)
	if err != nil {
		t.Fatal(err)
	}
	if got := pkDoctorHistory(findings); !slices.Equal(got, gaps) {
		t.Errorf("doctor reports gaps in %v, want %v", got, gaps)
	}
	t.Logf("%d moves, %d log bytes, %d sessions whose history missed their last move", 2*len(ids)-1, len(data), len(gaps))

	// Space again: --fix records every move the history missed.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	fixed, err := b.Check(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixed {
		if f.Fix == "" {
			t.Errorf("doctor --fix left %s %s: %s", f.Kind, f.Path, f.Message)
		}
	}
	if again, err := b.Check(false); err != nil || len(again) != 0 {
		t.Errorf("after the fix doctor finds %+v (err %v)", again, err)
	}
	if gaps := pkGaps(t, b); len(gaps) != 0 {
		t.Errorf("after the fix the history of %v still does not end where the session is", gaps)
	}
}

// fillDisk writes path until its filesystem has no page left.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, size := range []int{64 << 10, 4 << 10, 1} {
		chunk := bytes.Repeat([]byte{'x'}, size)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, unix.ENOSPC) {
					t.Fatalf("fill %s: %v", path, err)
				}
				break
			}
		}
	}
}

// pkCheckNoTornLine: data is whole lines, each blank or one complete event.
func pkCheckNoTornLine(t *testing.T, data []byte) {
	t.Helper()
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("events.log ends in a partial line: %q", data[bytes.LastIndexByte(data, '\n')+1:])
	}
	_, bad, err := sessions.ReadEvents(bytes.NewReader(data), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range bad {
		t.Errorf("events.log:%d is torn: %q", l.Line, l.Text)
	}
}
