package proc

import (
	"os"
	"strconv"
	"testing"
)

// A memoized Env reads the caller's identity once, for all its copies, and
// gives the same answers as a plain one; a plain Env reads it every time.
func TestMemoized(t *testing.T) {
	pid := os.Getpid()
	f := newFakeProc(t, pid, 4026532000)
	f.process(pid, "pickup", "R", 1, 99, "/usr/bin/pickup")
	hosts := 0
	plain := f.env(pid)
	plain.Hostname = func() (string, error) { hosts++; return "fakehost", nil }
	memo := plain.Memoized()
	want := Process{Host: "fakehost", PidNS: 4026532000, PID: pid, Start: 99, BootID: "boot-1", Exe: "/usr/bin/pickup"}
	if got := memo.Self(); got != want {
		t.Fatalf("memoized Self = %+v, want %+v", got, want)
	}
	if got := plain.Self(); got != want {
		t.Fatalf("Self = %+v, want %+v", got, want)
	}

	// What cannot change while a process runs, changed under it.
	f.write("sys/kernel/random/boot_id", "boot-2\n")
	f.write(strconv.Itoa(pid)+"/stat", strconv.Itoa(pid)+" (pickup) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 100 20\n")
	hosts = 0
	copied := memo // copies share what was read
	if got := copied.Self(); got != want {
		t.Errorf("memoized Self read again: %+v, want %+v", got, want)
	}
	if got := copied.bootID(); got != "boot-1" {
		t.Errorf("memoized bootID = %q, want boot-1", got)
	}
	if p, err := copied.Lookup(pid); err != nil || p.BootID != "boot-1" || p.Start != 100 {
		t.Errorf("memoized Lookup = %+v, %v: want the boot id read once, the start time read now", p, err)
	}
	if hosts != 0 {
		t.Errorf("memoized Env asked for the host name %d more times", hosts)
	}
	if got := plain.Self(); got.BootID != "boot-2" || got.Start != 100 {
		t.Errorf("plain Self = %+v: want what /proc says now", got)
	}
}
