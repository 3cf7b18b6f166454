package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestEventLogConcurrentAppends: 16 processes append 500 lines each at
// once; every line arrives whole, none is lost or duplicated.
func TestEventLogConcurrentAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 16 processes")
	}
	const procs, lines = 16, 500
	b := eventlogBoard(t)
	cmds := make([]*exec.Cmd, procs)
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEventLogAppendHelper$")
		cmd.Env = append(os.Environ(),
			"PICKUP_EVENTLOG_HELPER="+b.Dir,
			"PICKUP_EVENTLOG_WRITER="+strconv.Itoa(p),
			"PICKUP_EVENTLOG_LINES="+strconv.Itoa(lines))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[p] = cmd
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	data, err := os.ReadFile(b.EventLogPath())
	if err != nil {
		t.Fatal(err)
	}
	if data[len(data)-1] != '\n' {
		t.Fatal("log does not end with a newline")
	}
	raw := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(raw) != procs*lines {
		t.Fatalf("%d lines, want %d", len(raw), procs*lines)
	}
	seen := map[string]bool{}
	next := make([]int, procs) // each writer's lines arrive in its order
	for i, l := range raw {
		var e Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %d is torn: %q", i+1, l)
		}
		if seen[e.Reason] {
			t.Fatalf("line %d duplicated: %q", i+1, l)
		}
		seen[e.Reason] = true
		var p, n int
		if _, err := fmt.Sscanf(e.Reason, "writer %d line %d", &p, &n); err != nil || p < 0 || p >= procs {
			t.Fatalf("line %d: unexpected reason %q", i+1, e.Reason)
		}
		if n != next[p] {
			t.Fatalf("writer %d: line %d arrived when %d was due", p, n, next[p])
		}
		next[p]++
	}
	ev, bad, err := b.Events("")
	if err != nil || len(bad) != 0 || len(ev) != procs*lines {
		t.Fatalf("Events: %d events, %d bad lines, %v", len(ev), len(bad), err)
	}
}

// TestEventLogAppendHelper is one writer process of
// TestEventLogConcurrentAppends.
func TestEventLogAppendHelper(t *testing.T) {
	dir := os.Getenv("PICKUP_EVENTLOG_HELPER")
	if dir == "" {
		t.Skip("helper process")
	}
	p, _ := strconv.Atoi(os.Getenv("PICKUP_EVENTLOG_WRITER"))
	lines, _ := strconv.Atoi(os.Getenv("PICKUP_EVENTLOG_LINES"))
	// NoSync: 8,000 fsyncs in a row would measure the disk, not the
	// appends. Atomicity does not depend on fsync.
	b := &Board{Dir: dir, NoSync: true}
	// Odd writers keep the log open (an EventLog, as a claim.Client
	// does), even ones open it for every line: both kinds exclude each
	// other.
	appendEvent := b.AppendEvent
	if p%2 == 1 {
		l := b.OpenEventLog()
		defer l.Close()
		appendEvent = func(e Event) error { return l.Append(e) }
	}
	pad := strings.Repeat("x", 200) // lines of ~400 bytes: plenty to tear
	for n := range lines {
		e := Event{Op: "claim", ID: fmt.Sprintf("s-%d-%d", p, n), From: "todo", To: "doing/w" + strconv.Itoa(p),
			Owner: "w" + strconv.Itoa(p), Reason: fmt.Sprintf("writer %d line %d %s", p, n, pad)}
		if err := appendEvent(e); err != nil {
			t.Fatal(err)
		}
	}
}

// logLines returns the reasons of the events in the file at path, in order.
func logLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if l == "" {
			continue
		}
		var e Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%s: torn line %q", path, l)
		}
		out = append(out, e.Reason)
	}
	return out
}

// openFDs counts this process's open file descriptors (Linux only).
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(entries)
}

// TestEventLogFollowsTheFile: an EventLog keeps one file open across
// appends, and opens the log's path again when the log was rotated away,
// removed, or replaced by another file (what a git checkout does), so that
// every line lands in the file that is the log at the time. After Close it
// holds no file and refuses to append.
func TestEventLogFollowsTheFile(t *testing.T) {
	for _, sync := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			b := eventlogBoard(t)
			b.NoSync = !sync
			path := b.EventLogPath()
			fds := openFDs(t)
			l := b.OpenEventLog()
			add := func(reason string) {
				t.Helper()
				if err := l.Append(Event{Op: "claim", ID: "s1", From: "todo", To: "doing/a", Reason: reason}); err != nil {
					t.Fatal(err)
				}
			}
			add("one")
			add("two")
			if n := openFDs(t); n != fds+1 {
				t.Errorf("%d descriptors open after two appends, want %d (one, kept open)", n, fds+1)
			}
			// Rotated: the next line starts the new log.
			if err := os.Rename(path, path+".1"); err != nil {
				t.Fatal(err)
			}
			add("three")
			// Removed.
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			add("four")
			// Replaced by another file (written aside, renamed over).
			if err := os.WriteFile(path+".new", []byte{}, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
			add("five")
			add("six")
			if got, want := logLines(t, path+".1"), []string{"one", "two"}; !slices.Equal(got, want) {
				t.Errorf("rotated log holds %q, want %q", got, want)
			}
			if got, want := logLines(t, path), []string{"five", "six"}; !slices.Equal(got, want) {
				t.Errorf("log holds %q, want %q", got, want)
			}
			if n := openFDs(t); n != fds+1 {
				t.Errorf("%d descriptors open after reopening, want %d", n, fds+1)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if n := openFDs(t); n != fds {
				t.Errorf("%d descriptors open after Close, want %d", n, fds)
			}
			if err := l.Append(Event{Op: "claim", ID: "s1", To: "doing/a"}); !errors.Is(err, os.ErrClosed) {
				t.Errorf("append after Close: %v, want os.ErrClosed", err)
			}
		})
	}
}

// TestEventLogSharedAppends: goroutines append at once through one
// EventLog (one line or two at a time), through EventLogs of their own and
// with AppendEvent, fsyncing: every line arrives once and whole, each
// goroutine's in its order.
func TestEventLogSharedAppends(t *testing.T) {
	const goroutines, lines = 12, 40
	b := eventlogBoard(t)
	shared := b.OpenEventLog()
	defer shared.Close()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev := func(n int) Event {
				return Event{Op: "claim", ID: "s1", To: "doing/a", Reason: fmt.Sprintf("%d %d", g, n)}
			}
			var err error
			for n := 0; n < lines && err == nil; n++ {
				switch g % 4 {
				case 0:
					err = shared.Append(ev(n))
				case 1:
					own := b.OpenEventLog()
					err = own.Append(ev(n))
					own.Close()
				case 2:
					err = b.AppendEvent(ev(n))
				case 3:
					err = shared.Append(ev(n), ev(n+1))
					n++
				}
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got := logLines(t, b.EventLogPath())
	if len(got) != goroutines*lines {
		t.Fatalf("%d lines, want %d", len(got), goroutines*lines)
	}
	next := make([]int, goroutines)
	for _, r := range got {
		var g, n int
		if _, err := fmt.Sscanf(r, "%d %d", &g, &n); err != nil || g < 0 || g >= goroutines {
			t.Fatalf("unexpected line %q", r)
		}
		if n != next[g] {
			t.Fatalf("goroutine %d: line %d arrived when %d was due", g, n, next[g])
		}
		next[g]++
	}
}
