package claim_test

// `pickup next --wait` as a process: its waiters watch the board and are
// woken by other processes (wait_test.go has the library's wake-ups).

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// waWatching waits until process pid holds at least two inotify watches:
// `pickup next --wait` has its signal handler and its watcher, and looks or
// sleeps. It skips the test where /proc does not tell.
func waWatching(t *testing.T, pid int) {
	t.Helper()
	if _, err := os.Stat("/proc/self/fdinfo"); err != nil {
		t.Skip("no /proc/PID/fdinfo to see when the waiter watches")
	}
	deadline := time.Now().Add(waPatience)
	for time.Now().Before(deadline) {
		n := 0
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); target == "anon_inode:inotify" {
				info, _ := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
				n += strings.Count(string(info), "inotify wd:")
			}
		}
		if n >= 2 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d never watched the board", pid)
}

// TestWaitCLI runs `pickup next --wait` as a process: it claims a session
// created while it waits, exits 3 at its timeout, and 130 when interrupted
// (the exit code of an interrupt, as `pickup next` without --wait; the
// help says --wait "exits 3 only at the timeout").
func TestWaitCLI(t *testing.T) {
	tests := []struct {
		name     string
		wait     string
		act      func(t *testing.T, b *sessions.Board, p *os.Process) string // returns the id to be claimed, if any
		wantCode int
	}{
		{
			name: "a session created while it waits",
			wait: "--wait=1m",
			act: func(t *testing.T, b *sessions.Board, _ *os.Process) string {
				s, err := b.Create(sessions.Meta{Title: "for the waiter"}, nil)
				if err != nil {
					t.Fatal(err)
				}
				return s.ID
			},
		},
		{name: "timeout", wait: "--wait=300ms", wantCode: 3},
		{
			name: "SIGINT while waiting", wait: "--wait", wantCode: 130,
			act: func(t *testing.T, _ *sessions.Board, p *os.Process) string {
				if err := p.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
				return ""
			},
		},
		{
			name: "SIGTERM while waiting", wait: "--wait=1h", wantCode: 130,
			act: func(t *testing.T, _ *sessions.Board, p *os.Process) string {
				if err := p.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				return ""
			},
		},
	}
	exe := pkSelf(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			pkPut(t, b, sessions.Doing, "other", "held", sessions.Meta{})
			cmd := pickupCmd(exe, "--dir", b.Dir, "--owner", "waiter", "--no-sync", "--json", "next", tt.wait)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer func() {
				if cmd.ProcessState == nil {
					_ = cmd.Process.Kill()
					<-exited
				}
			}()
			want := ""
			if tt.act != nil {
				waWatching(t, cmd.Process.Pid)
				want = tt.act(t, b, cmd.Process)
			}
			var err error
			select {
			case err = <-exited:
			case <-time.After(waPatience):
				t.Fatalf("pickup next %s did not exit\nstderr:\n%s", tt.wait, stderr.String())
			}
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode {
				t.Errorf("pickup next %s: exit code %d, want %d\nstdout: %s\nstderr: %s", tt.wait, code, tt.wantCode, stdout.String(), stderr.String())
			}
			if want == "" {
				if w, err := pkWalk(b); err != nil || len(w) != 1 || len(w["held"]) != 1 {
					t.Errorf("the board changed: %v, %v", w, err)
				}
				return
			}
			var got struct{ ID, State, Owner string }
			if err := json.Unmarshal([]byte(stdout.String()), &got); err != nil {
				t.Fatalf("stdout %q: %v", stdout.String(), err)
			}
			if got.ID != want || got.State != "doing" || got.Owner != "waiter" {
				t.Errorf("claimed %+v, want %s in doing by waiter", got, want)
			}
			if where := pkWhere(t, b, want); where != "doing/waiter" {
				t.Errorf("%s is in %s, want doing/waiter", want, where)
			}
		})
	}
}
