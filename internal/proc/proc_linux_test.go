package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// fakeProc is a /proc tree written by a test.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T, self int, ns uint64) fakeProc {
	t.Helper()
	f := fakeProc{t: t, root: t.TempDir()}
	f.write("sys/kernel/random/boot_id", "boot-1\n")
	f.link("self", strconv.Itoa(self))
	f.link(strconv.Itoa(self)+"/ns/pid", "pid:["+strconv.FormatUint(ns, 10)+"]")
	return f
}

func (f fakeProc) write(rel, data string) {
	f.t.Helper()
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f fakeProc) link(rel, target string) {
	f.t.Helper()
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		f.t.Fatal(err)
	}
}

// process adds a process: its stat (state, parent, start time) and, unless
// exe is "", its executable.
func (f fakeProc) process(pid int, comm, state string, ppid int, start uint64, exe string) {
	f.t.Helper()
	f.write(strconv.Itoa(pid)+"/stat", strconv.Itoa(pid)+" ("+comm+") "+state+" "+strconv.Itoa(ppid)+
		" 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 "+strconv.FormatUint(start, 10)+" 20\n")
	if exe != "" {
		f.link(strconv.Itoa(pid)+"/exe", exe)
	}
}

func (f fakeProc) env(self int) Env {
	return Env{Hostname: func() (string, error) { return "fakehost", nil }, ProcRoot: f.root, PID: self}
}

// TestEnvFake reads a fake /proc and a fake hostname.
func TestEnvFake(t *testing.T) {
	pid := os.Getpid() // a pid that exists, so that kill(2) agrees
	f := newFakeProc(t, pid, 4026532000)
	f.write(strconv.Itoa(pid)+"/stat", strconv.Itoa(pid)+" (evil ) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 77 ) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 99 20\n")
	f.link(strconv.Itoa(pid)+"/exe", "/usr/bin/pickup (deleted)")
	env := f.env(pid)

	got, err := env.Lookup(pid)
	want := Process{Host: "fakehost", PidNS: 4026532000, PID: pid, Start: 99, BootID: "boot-1", Exe: "/usr/bin/pickup"}
	if err != nil || got != want {
		t.Fatalf("Lookup = %+v, %v; want %+v", got, err, want)
	}
	local := env.Self()
	if local != want {
		t.Fatalf("Self = %+v, want %+v", local, want)
	}
	if l := env.Liveness(want, local); l != Alive {
		t.Errorf("recorded process is %v, want alive", l)
	}
	old := want
	old.Start = 98
	if l := env.Liveness(old, local); l != Dead {
		t.Errorf("process with another start time is %v, want dead", l)
	}
	// A pid that exists but that /proc does not show (hidepid): kill(2)
	// says it exists, so it is never called dead.
	hidden := want
	hidden.PID = os.Getppid()
	if l := env.Liveness(hidden, local); l != Alive {
		t.Errorf("process hidden from /proc is %v, want alive", l)
	}
	// The same process recorded in another pid namespace: its number
	// means nothing here.
	other := want
	other.PidNS++
	if l := env.Liveness(other, local); l != Unknown {
		t.Errorf("process of another pid namespace is %v, want unknown", l)
	}
}

// TestLivenessWhileExiting: a process that exits, or is reaped, while it
// is being judged. Whatever moment the two looks (/proc and kill(2)) fall
// on, a process that had exited when the judgment began is never called
// alive: one that is reaped between them once was (a zombie to kill(2),
// then missing from /proc, taken for a process that /proc hides).
func TestLivenessWhileExiting(t *testing.T) {
	const pid, start = 4242, 500
	tests := []struct {
		name  string
		state string // in /proc when the judgment begins; "" absent
		// kill is what kill(pid, 0) finds; reap, that the process is
		// reaped (gone from /proc) as kill(2) looks.
		kill error
		reap bool
		want Liveness
	}{
		{"runs", "S", nil, false, Alive},
		{"hidden by /proc", "", nil, false, Alive},
		{"exits and is reaped between the looks", "S", syscall.ESRCH, true, Dead},
		{"a zombie reaped between the looks", "Z", nil, true, Dead},
		{"a zombie", "Z", nil, false, Dead},
		{"gone", "", syscall.ESRCH, false, Dead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			self := os.Getpid()
			f := newFakeProc(t, self, 4026532000)
			f.process(self, "pickup", "S", 1, 99, "/usr/bin/pickup")
			if tt.state != "" {
				f.process(pid, "agent", tt.state, self, start, "")
			}
			env := f.env(self)
			env.Signal0 = func(p int) error {
				if p != pid {
					t.Fatalf("kill(%d, 0), want only %d", p, pid)
				}
				if tt.reap {
					if err := os.RemoveAll(filepath.Join(f.root, strconv.Itoa(pid))); err != nil {
						t.Fatal(err)
					}
				}
				return tt.kill
			}
			local := env.Self()
			p := local
			p.PID, p.Start, p.Exe = pid, start, ""
			if got := env.Liveness(p, local); got != tt.want {
				t.Errorf("Liveness = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestLivenessZombieReapedWhileJudged: a real zombie, reaped by its parent
// (the test) the moment kill(2) has looked at it, is dead, as the real
// /proc tells.
func TestLivenessZombieReapedWhileJudged(t *testing.T) {
	cmd := startSleep(t)
	child, err := Lookup(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not waited for yet: a zombie once the signal is delivered.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if st, err := (Env{}).stat(child.PID); err == nil && st.zombie {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed child never became a zombie")
		}
	}
	env := Env{Signal0: func(pid int) error {
		err := signal0(pid)
		_ = cmd.Wait() // reaped right after kill(2) found it
		return err
	}}
	if l := env.Liveness(child, env.Self()); l != Dead {
		t.Fatalf("zombie reaped while judged is %v, want dead", l)
	}
}

// TestForeignProc: a /proc whose "self" is not the caller (a sandbox with a
// new pid namespace that kept the outer /proc) proves nothing.
func TestForeignProc(t *testing.T) {
	pid := os.Getpid()
	f := newFakeProc(t, pid+1, 4026532000) // "self" names another pid
	f.process(pid, "pickup", "S", 50, 99, "/usr/bin/pickup")
	f.process(50, "bash", "S", 1, 90, "/usr/bin/bash")
	env := f.env(pid)
	self := env.Self()
	if self.PidNS != 0 {
		t.Fatalf("Self under a foreign /proc = %+v, want no namespace", self)
	}
	if l := env.Liveness(self, self); l != Unknown {
		t.Errorf("liveness under a foreign /proc = %v, want unknown", l)
	}
	if got := env.Invokers(); got != nil {
		t.Errorf("Invokers under a foreign /proc = %+v, want none", got)
	}
}

func TestInvokers(t *testing.T) {
	const self = 1000
	type proc struct {
		pid, ppid int
		comm, exe string
		state     string
	}
	tests := []struct {
		name  string
		ns    uint64
		procs []proc
		want  []int
	}{
		{"script subshells up to the program that ran the script", 4026532000, []proc{
			{self, 40, "pickup", "/usr/bin/pickup", "S"},
			{40, 30, "drain.sh", "/usr/bin/bash", "S"}, // $( ... ) of a shebang script: named after the script
			{30, 20, "drain.sh", "/usr/bin/bash", "S"}, // ( while ... ) &
			{20, 10, "drain.sh", "/usr/bin/bash", "S"}, // the script itself
			{10, 5, "python3", "/usr/bin/python3.11", "S"},
			{5, 1, "sshd", "/usr/sbin/sshd", "S"},
		}, []int{40, 30, 20, 10}},
		{"wrappers are passed", 4026532000, []proc{
			{self, 40, "pickup", "/usr/bin/pickup", "S"},
			{40, 30, "timeout", "/usr/bin/timeout", "S"},
			{30, 20, "sh", "/usr/bin/dash", "S"},
			{20, 10, "xargs", "/usr/bin/xargs", "S"},
			{10, 5, "node", "/usr/bin/node", "S"},
		}, []int{40, 30, 20, 10}},
		{"an agent's shell", 4026532000, []proc{
			{self, 40, "pickup", "/usr/bin/pickup", "S"},
			{40, 30, "bash", "/bin/bash", "S"},
			{30, 20, "claude", "/usr/local/bin/claude", "S"},
			{20, 10, "bash", "/bin/bash", "S"},
		}, []int{40, 30}},
		{"the system's init is never taken", initialPidNS, []proc{
			{self, 40, "pickup", "/usr/bin/pickup", "S"},
			{40, 1, "bash", "/usr/bin/bash", "S"},
			{1, 0, "systemd", "/usr/lib/systemd/systemd", "S"},
		}, []int{40}},
		{"an orphan's adopter is never taken", 4026532000, []proc{
			{self, 40, "pickup", "/usr/bin/pickup", "S"},
			{40, 30, "bash", "/usr/bin/bash", "S"},
			{30, 1, "systemd", "/usr/lib/systemd/systemd", "S"},
		}, []int{40}},
		{"pid 1 of a sandbox is its first process", 4026532000, []proc{
			{self, 2, "pickup", "/usr/bin/pickup", "S"},
			{2, 1, "bash", "/usr/bin/bash", "S"},
			{1, 0, "bash", "/usr/bin/bash", "S"}, // parent outside: 0
		}, []int{2, 1}},
		{"an executable that cannot be read ends the walk", 4026532000, []proc{
			{self, 40, "pickup", "/usr/bin/pickup", "S"},
			{40, 30, "sudo", "", "S"},
			{30, 20, "bash", "/usr/bin/bash", "S"},
		}, []int{40}},
		{"a dying parent ends the walk", 4026532000, []proc{
			{self, 40, "pickup", "/usr/bin/pickup", "S"},
			{40, 30, "bash", "/usr/bin/bash", "S"},
			{30, 20, "bash", "/usr/bin/bash", "Z"},
			{20, 10, "python3", "/usr/bin/python3", "S"},
		}, []int{40}},
		{"pickup's parent is gone: nothing", 4026532000, []proc{
			{self, 40, "pickup", "/usr/bin/pickup", "S"},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeProc(t, self, tt.ns)
			for _, p := range tt.procs {
				f.process(p.pid, p.comm, p.state, p.ppid, uint64(p.pid)*7, p.exe)
			}
			got := f.env(self).Invokers()
			var pids []int
			for _, p := range got {
				pids = append(pids, p.PID)
				if p.PidNS != tt.ns || p.Host != "fakehost" || p.BootID != "boot-1" || p.Start != uint64(p.PID)*7 {
					t.Errorf("invoker %+v: want namespace %d, host, boot id and start time recorded", p, tt.ns)
				}
			}
			if !equalInts(pids, tt.want) {
				t.Errorf("Invokers = %v, want %v", pids, tt.want)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestInvokersReal walks the real process tree from a child run through a
// shebang script's subshell: the child must never stop at the subshell.
func TestInvokersReal(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "walk.sh")
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	// The test binary, run again, prints its invokers (TestMain).
	body := "#!/bin/bash\n( for i in 1; do x=$(" + strconv.Quote(self) + " | cat); echo \"$x\"; done ) &\nwait\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script)
	cmd.Env = append(os.Environ(), envPrintInvokers+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	// Every invoker printed is a bash (the command substitution, the
	// background loop, the script) up to this test process, a program of
	// its own, which ends the walk.
	got := string(out)
	want := "bash bash bash " + filepath.Base(self) + "@" + strconv.Itoa(os.Getpid())
	if got != want+"\n" {
		t.Errorf("invokers through a shebang script's subshells = %q, want %q", got, want)
	}
}
