package proc

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestEnvFake reads a fake /proc and a fake hostname.
func TestEnvFake(t *testing.T) {
	root := t.TempDir()
	pid := os.Getpid() // a pid that exists, so that kill(2) agrees
	write := func(rel, data string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(strconv.Itoa(pid)+"/stat", strconv.Itoa(pid)+" (evil ) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 77 ) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 99 20\n")
	write("sys/kernel/random/boot_id", "boot-1\n")
	env := Env{Hostname: func() (string, error) { return "fakehost", nil }, ProcRoot: root}

	got, err := env.Lookup(pid)
	want := Process{Host: "fakehost", PID: pid, Start: 99, BootID: "boot-1"}
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
	// A pid that exists but that /proc does not show (hidepid, no /proc):
	// kill(2) says it exists, so it is never called dead.
	hidden := want
	hidden.PID = os.Getppid()
	if l := env.Liveness(hidden, local); l != Alive {
		t.Errorf("process hidden from /proc is %v, want alive", l)
	}
}

func TestParseStat(t *testing.T) {
	tail := " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 424242 20 21"
	tests := []struct {
		name   string
		in     string
		start  uint64
		zombie bool
		err    bool
	}{
		{"plain", "123 (sleep) S" + tail, 424242, false, false},
		{"spaces in comm", "123 (my prog) R" + tail, 424242, false, false},
		{"parens in comm", "123 (a) b) (c)) S" + tail, 424242, false, false},
		{"fake fields in comm", "123 (x) Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 9 ) S" + tail, 424242, false, false},
		{"zombie", "123 (sleep) Z" + tail, 424242, true, false},
		{"dead", "123 (sleep) X" + tail, 424242, true, false},
		{"no comm", "123 sleep S" + tail, 0, false, true},
		{"truncated", "123 (sleep) S 1 2 3", 0, false, true},
		{"bad start", "123 (sleep) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 x 20", 0, false, true},
		{"empty", "", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in))
			if (err != nil) != tt.err {
				t.Fatalf("parseStat(%q) error = %v, want error %v", tt.in, err, tt.err)
			}
			if err == nil && (got.start != tt.start || got.zombie != tt.zombie) {
				t.Fatalf("parseStat(%q) = %+v, want start %d zombie %v", tt.in, got, tt.start, tt.zombie)
			}
		})
	}
}
