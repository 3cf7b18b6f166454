package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// envShortAppend makes TestShortAppendChild append under a file size limit:
// "<board dir>|<board or log>|<limit in bytes>".
const envShortAppend = "PICKUP_TEST_SHORT_APPEND"

// TestShortAppendLeavesNoTornLine: an append that the system cuts short
// part-way (a full disk; here a file size limit, which cuts a write the same
// way without needing root) leaves no partial line in the log, through the
// one-shot Board.AppendEvent and through an open EventLog alike. The append
// fails, and a later append lands on a line of its own.
func TestShortAppendLeavesNoTornLine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_FSIZE cuts writes short on Linux; the code under test is the same elsewhere")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot re-run the test binary: %v", err)
	}
	for _, how := range []string{"board", "log"} {
		t.Run(how, func(t *testing.T) {
			b := eventlogBoard(t)
			for i := range 3 {
				if err := b.AppendEvent(Event{Op: "new", ID: fmt.Sprintf("s%d", i), To: "todo"}); err != nil {
					t.Fatal(err)
				}
			}
			info, err := os.Stat(b.EventLogPath())
			if err != nil {
				t.Fatal(err)
			}
			// Room for half of the next line: its write is cut part-way.
			limit := info.Size() + 40
			cmd := exec.Command(exe, "-test.run=^TestShortAppendChild$", "-test.v")
			cmd.Env = append(os.Environ(), envShortAppend+"="+b.Dir+"|"+how+"|"+strconv.FormatInt(limit, 10))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			if !bytes.Contains(out, []byte("the partial line was erased")) {
				t.Fatalf("the child's first append should fail, its partial line erased:\n%s", out)
			}
			// After the limit, the log is writable again.
			if err := b.AppendEvent(Event{Op: "new", ID: "after", To: "todo"}); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(b.EventLogPath())
			if err != nil {
				t.Fatal(err)
			}
			checkNoTornLine(t, data)
			events, bad, err := ReadEvents(bytes.NewReader(data), "")
			if err != nil || len(bad) != 0 {
				t.Fatalf("ReadEvents: %v, bad lines %+v\n%q", err, bad, data)
			}
			var ids []string
			for _, e := range events {
				ids = append(ids, e.ID)
			}
			if got := strings.Join(ids, " "); got != "s0 s1 s2 after" {
				t.Errorf("events %s, want s0 s1 s2 after (the cut ones are missing, never half there)", got)
			}
		})
	}
}

// checkNoTornLine: data is whole lines, each blank or one complete event.
func checkNoTornLine(t *testing.T, data []byte) {
	t.Helper()
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("the log ends in a partial line: %q", data[bytes.LastIndexByte(data, '\n')+1:])
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if _, ok := parseEvent(line, "", nil); !ok {
			t.Errorf("line %d is torn: %q", i+1, line)
		}
	}
}

// TestShortAppendChild is TestShortAppendLeavesNoTornLine's child process:
// it lowers its file size limit and appends three events, printing each
// append's error. It does nothing in a normal test run.
func TestShortAppendChild(t *testing.T) {
	spec := os.Getenv(envShortAppend)
	if spec == "" {
		t.Skip("run by TestShortAppendLeavesNoTornLine")
	}
	parts := strings.Split(spec, "|")
	limit, _ := strconv.ParseUint(parts[2], 10, 64)
	b, err := Open(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	// A write past the limit raises SIGXFSZ, whose default action kills;
	// ignored, the write is cut short instead (or fails with EFBIG).
	signal.Ignore(syscall.SIGXFSZ)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		t.Fatal(err)
	}
	l := b.OpenEventLog()
	defer l.Close()
	for i := 1; i <= 3; i++ {
		e := Event{Op: "claim", ID: fmt.Sprintf("cut%d", i), Owner: "alice", From: "todo", To: "doing/alice", Reason: "a reason long enough to cross the limit"}
		if parts[1] == "board" {
			err = b.AppendEvent(e)
		} else {
			err = l.Append(e)
		}
		if err == nil {
			t.Errorf("append %d: no error past the file size limit", i)
			continue
		}
		var torn *TornLineError
		if i == 1 && (!errors.Is(err, io.ErrShortWrite) || !errors.As(err, &torn) || !torn.Erased) {
			t.Errorf("append 1: %v, want a short write, erased", err)
		}
		fmt.Printf("append %d: %v\n", i, err)
	}
}
