package claim_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// TestWorkCLISignals runs `pickup work --json -j 3` as a child process over
// 4 quick sessions (high priority: they go first) and 6 slow ones, and
// signals it once 3 slow commands run: the first signal makes the process
// stop claiming, signal the commands, release what is unfinished and exit
// 128+signal; when the commands ignore it, a second signal kills them at
// once. Nothing is lost: every session is in exactly one place, done or
// back in todo/, none in doing/.
func TestWorkCLISignals(t *testing.T) {
	const jobs = 3
	tests := []struct {
		name    string
		sig     syscall.Signal
		grace   string
		twice   bool // the slow commands ignore the signal: send a second one
		wantErr int
	}{
		{name: "SIGTERM", sig: syscall.SIGTERM, grace: "1m", wantErr: 143},
		{name: "SIGINT", sig: syscall.SIGINT, grace: "1m", wantErr: 130},
		{name: "second SIGTERM kills commands that ignore the first", sig: syscall.SIGTERM, grace: "10m", twice: true, wantErr: 143},
	}
	exe := pkSelf(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			var fast, slow, ids []string
			for i := 1; i <= 4; i++ {
				fast = append(fast, fmt.Sprintf("f%d", i))
				pkPut(t, b, sessions.Todo, "", fast[i-1], sessions.Meta{Priority: sessions.High})
			}
			for i := 1; i <= 6; i++ {
				slow = append(slow, fmt.Sprintf("s%d", i))
				pkPut(t, b, sessions.Todo, "", slow[i-1], sessions.Meta{Priority: sessions.Low})
			}
			ids = append(append(ids, fast...), slow...)
			marks := t.TempDir()
			// A quick session exits 0; a slow one marks that it runs, then
			// sleeps (ignoring the signal if twice: "trap" is inherited
			// through exec).
			script := `case "$PICKUP_SESSION_ID" in f*) exit 0;; esac; `
			if tt.twice {
				script += fmt.Sprintf(`trap "" %s; `, strings.TrimPrefix(unixSignalName(tt.sig), "SIG"))
			}
			script += `: > "$MARKS/$PICKUP_SESSION_ID"; exec sleep 60`
			cmd := pickupCmd(exe, "--dir", b.Dir, "--owner", "worker", "--no-sync", "--json",
				"work", "-j", strconv.Itoa(jobs), "--grace", tt.grace, "--", "sh", "-c", script)
			cmd.Env = append(cmd.Env, "MARKS="+marks)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			cmd.WaitDelay = 5 * time.Second // a failed test may leave sleeps holding stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			var lines []string
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines = append(lines, sc.Text())
				}
				exited <- cmd.Wait()
			}()
			defer func() {
				if cmd.ProcessState == nil {
					_ = cmd.Process.Kill()
					<-exited
				}
			}()
			// Wait until the quick sessions are done and 3 slow commands run.
			deadline := time.Now().Add(waPatience)
			for {
				marked, _ := os.ReadDir(marks)
				if len(marked) == jobs {
					break
				}
				if len(marked) > jobs || time.Now().After(deadline) {
					t.Fatalf("%d slow commands running, want %d\nstderr:\n%s", len(marked), jobs, stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			if tt.twice {
				// The commands ignore the signal and the grace is long: the
				// process stays until told again.
				select {
				case err := <-exited:
					t.Fatalf("pickup work exited (%v) on the first signal although its commands ignore it and the grace is %s\nstderr:\n%s", err, tt.grace, stderr.String())
				case <-time.After(300 * time.Millisecond):
				}
				if err := cmd.Process.Signal(tt.sig); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case err = <-exited:
			case <-time.After(time.Minute):
				t.Fatalf("pickup work did not exit after the signal\nstderr:\n%s", stderr.String())
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != tt.wantErr {
				t.Fatalf("pickup work: %v, want exit code %d\nstderr:\n%s", err, tt.wantErr, stderr.String())
			}
			// The board: quick ones done, every slow one back in todo/.
			places := wkPlaces(t, b, ids)
			if !slices.Equal(places["done"], fast) {
				t.Errorf("done holds %v, want %v", places["done"], fast)
			}
			if !slices.Equal(places["todo"], slow) {
				t.Errorf("todo holds %v, want %v", places["todo"], slow)
			}
			if len(places["doing/worker"]) > 0 {
				t.Errorf("left in doing/: %v", places["doing/worker"])
			}
			for _, id := range slow {
				if s, _ := wkFile(t, b, sessions.Todo, id); s.Attempts != 0 {
					t.Errorf("%s has attempts %d after a stop, want 0", id, s.Attempts)
				}
			}
			// The JSON stream: one event per line, then the summary.
			counts := map[string]int{}
			var summary struct {
				Event   string            `json:"event"`
				Summary claim.WorkSummary `json:"summary"`
			}
			for i, line := range lines {
				var ev claim.WorkEvent
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatalf("stdout line %d %q: %v", i+1, line, err)
				}
				counts[ev.Event]++
				if i == len(lines)-1 {
					if err := json.Unmarshal([]byte(line), &summary); err != nil {
						t.Fatal(err)
					}
				}
			}
			wantCounts := map[string]int{"claimed": 4 + jobs, "done": 4, "released": jobs, "summary": 1}
			if fmt.Sprint(counts) != fmt.Sprint(wantCounts) {
				t.Errorf("events %v, want %v\nstdout:\n%s", counts, wantCounts, strings.Join(lines, "\n"))
			}
			wantSum := claim.WorkSummary{Claimed: 4 + jobs, Done: 4, Released: jobs}
			if summary.Event != "summary" || summary.Summary != wantSum {
				t.Errorf("last line %+v, want the summary %+v", summary, wantSum)
			}
		})
	}
}

func unixSignalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return fmt.Sprint(int(s))
}
