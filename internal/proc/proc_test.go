package proc

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

func TestSelf(t *testing.T) {
	self := Self()
	host, _ := os.Hostname()
	if self.PID != os.Getpid() || self.Host != host {
		t.Fatalf("Self() = %+v, want pid %d on %q", self, os.Getpid(), host)
	}
	if runtime.GOOS == "linux" && (self.Start == 0 || self.BootID == "" || self.PidNS == 0 || self.Exe == "") {
		t.Fatalf("Self() = %+v: want a start time, a boot id, a pid namespace and an executable on linux", self)
	}
	got, err := Lookup(os.Getpid())
	if err != nil || !got.Same(self) {
		t.Fatalf("Lookup(self) = %+v, %v; want %+v", got, err, self)
	}
	if l := self.Liveness(self); l != Alive {
		t.Fatalf("self is %v, want alive", l)
	}
}

func TestLookupInvalid(t *testing.T) {
	for _, pid := range []int{0, -1} {
		if _, err := Lookup(pid); !errors.Is(err, ErrNotFound) {
			t.Errorf("Lookup(%d) = %v, want ErrNotFound", pid, err)
		}
	}
}

func TestLiveness(t *testing.T) {
	self := Self()
	with := func(f func(*Process)) Process { p := self; f(&p); return p }
	tests := []struct {
		name string
		p    Process
		want Liveness
	}{
		{"self", self, Alive},
		{"other host", with(func(p *Process) { p.Host = "elsewhere.invalid" }), Unknown},
		{"no pid", with(func(p *Process) { p.PID = 0 }), Unknown},
		{"negative pid", with(func(p *Process) { p.PID = -1 }), Unknown},
		{"unknown start", with(func(p *Process) { p.Start = 0 }), Alive},
		{"unknown boot", with(func(p *Process) { p.BootID = "" }), Alive},
		{"other boot", with(func(p *Process) { p.BootID = "00000000-0000-0000-0000-000000000000" }), Dead},
		{"other boot, other host", with(func(p *Process) { p.Host, p.BootID = "elsewhere.invalid", "x" }), Unknown},
	}
	if runtime.GOOS == "linux" {
		tests = append(tests, []struct {
			name string
			p    Process
			want Liveness
		}{
			{"other pid namespace", with(func(p *Process) { p.PidNS++ }), Unknown},
			{"no pid namespace recorded", with(func(p *Process) { p.PidNS = 0 }), Unknown},
		}...)
	}
	if runtime.GOOS == "linux" {
		tests = append(tests, struct {
			name string
			p    Process
			want Liveness
		}{"wrong start time (pid reused)", with(func(p *Process) { p.Start++ }), Dead})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Liveness(self); got != tt.want {
				t.Errorf("Liveness(%+v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func startSleep(t *testing.T) *exec.Cmd {
	t.Helper()
	path, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	cmd := exec.Command(path, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func TestLivenessChild(t *testing.T) {
	cmd := startSleep(t)
	child, err := Lookup(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	self := Self()
	if l := child.Liveness(self); l != Alive {
		t.Fatalf("running child is %v, want alive", l)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // reaped: the pid no longer exists
	if l := child.Liveness(self); l != Dead {
		t.Fatalf("killed child is %v, want dead", l)
	}
	if _, err := Lookup(child.PID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Lookup(killed child) = %v, want ErrNotFound", err)
	}
}

func TestLivenessZombie(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("zombies are recognised through /proc")
	}
	cmd := startSleep(t)
	child, err := Lookup(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not waited for: the child stays a zombie, which kill(pid, 0) still
	// finds. The kernel delivers the signal asynchronously, so poll.
	deadline := time.Now().Add(30 * time.Second)
	for child.Liveness(Self()) != Dead {
		if time.Now().After(deadline) {
			t.Fatal("killed, unreaped child never became dead")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
