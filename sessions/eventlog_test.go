package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func eventlogBoard(t *testing.T) *Board {
	t.Helper()
	b, err := Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEventLogAppendAndRead(t *testing.T) {
	b := eventlogBoard(t)
	t0 := time.Date(2026, 11, 22, 9, 15, 3, 0, time.UTC)
	b.Now = func() time.Time { return t0 }
	id := "2026-11-22_09-15-03"
	moves := []Event{
		{Op: "new", ID: id, Dst: b.Path(Todo, "", id)},
		{Op: "claim", ID: id, Owner: "agent-7", Src: b.Path(Todo, "", id), Dst: b.Path(Doing, "agent-7", id)},
		{Op: "claim", ID: "other", Owner: "agent-8", Src: b.Path(Todo, "", "other"), Dst: b.Path(Doing, "agent-8", "other")},
		{Op: "done", ID: id, Owner: "agent-7", Reason: "tests pass", Src: b.Path(Doing, "agent-7", id), Dst: b.Path(Done, "", id)},
		{Op: "doctor", ID: id, Src: b.Path(Todo, "", id), Dst: filepath.Join(b.Dir, "conflicts", id+".todo.md")},
	}
	for _, e := range moves {
		if err := b.AppendEvent(e); err != nil {
			t.Fatal(err)
		}
	}
	got, bad, err := b.Events(id)
	if err != nil || len(bad) != 0 {
		t.Fatalf("Events: %v, bad lines %v", err, bad)
	}
	want := []struct{ op, from, to, owner, reason string }{
		{"new", "", "todo", "", ""},
		{"claim", "todo", "doing/agent-7", "agent-7", ""},
		{"done", "doing/agent-7", "done", "agent-7", "tests pass"},
		{"doctor", "todo", "conflicts/" + id + ".todo.md", "", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Op != w.op || g.From != w.from || g.To != w.to || g.Owner != w.owner || g.Reason != w.reason || g.ID != id || !g.Time.Equal(t0) {
			t.Errorf("event %d = %+v, want %+v", i, g, w)
		}
		if g.Src != "" || g.Dst != "" {
			t.Errorf("event %d: paths were logged: %+v", i, g)
		}
	}
	all, _, err := b.Events("")
	if err != nil || len(all) != len(moves) {
		t.Fatalf("all events: %d, %v; want %d", len(all), err, len(moves))
	}
	// One JSON object per line, the fields the README documents.
	data, err := os.ReadFile(b.EventLogPath())
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(string(data), "\n", 2)[0]
	wantLine := `{"time":"2026-11-22T09:15:03Z","id":"2026-11-22_09-15-03","op":"new","from":"","to":"todo"}`
	if first != wantLine {
		t.Errorf("first line\n got %s\nwant %s", first, wantLine)
	}
}

func TestEventLogRefusesBadNames(t *testing.T) {
	b := eventlogBoard(t)
	for _, e := range []Event{
		{Op: "claim", ID: "../x", To: "todo"},
		{Op: "claim", ID: "", To: "todo"},
		{Op: "claim", ID: "ok", Owner: "a/b", To: "todo"},
	} {
		if err := b.AppendEvent(e); err == nil {
			t.Errorf("AppendEvent(%+v) succeeded", e)
		}
	}
	if _, err := os.Stat(b.EventLogPath()); !os.IsNotExist(err) {
		t.Errorf("log written for refused events: %v", err)
	}
	if _, _, err := b.Events("../x"); err == nil {
		t.Error("Events accepted an invalid id")
	}
}

func TestEventLogMissingIsEmpty(t *testing.T) {
	b := eventlogBoard(t)
	ev, bad, err := b.Events("x")
	if err != nil || ev != nil || bad != nil {
		t.Fatalf("Events on a board without a log = %v, %v, %v", ev, bad, err)
	}
}

// A line that a crash cut short must not take the next line with it, and
// readers skip and report what is not an event.
func TestEventLogTornAndGarbageLines(t *testing.T) {
	b := eventlogBoard(t)
	b.NoSync = true
	if err := b.AppendEvent(Event{Op: "claim", ID: "a", To: "doing/x"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(b.EventLogPath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A torn line (no newline), as a crash without fsync leaves it.
	if _, err := f.WriteString(`{"time":"2026-11-22T09:15:03Z","id":"a","op":"do`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// While it is the last line it may be an append in progress: not bad.
	ev, bad, err := b.Events("a")
	if err != nil || len(ev) != 1 || len(bad) != 0 {
		t.Fatalf("with a partial last line: %d events, bad %v, %v", len(ev), bad, err)
	}
	if err := b.AppendEvent(Event{Op: "done", ID: "a", To: "done"}); err != nil {
		t.Fatal(err)
	}
	f, _ = os.OpenFile(b.EventLogPath(), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("garbage a line\n\n{\"id\":\"a\"}\n")
	f.Close()
	if err := b.AppendEvent(Event{Op: "reopen", ID: "a", To: "todo"}); err != nil {
		t.Fatal(err)
	}
	ev, bad, err = b.Events("a")
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, e := range ev {
		ops = append(ops, e.Op)
	}
	if strings.Join(ops, ",") != "claim,done,reopen" {
		t.Errorf("ops = %v, want claim,done,reopen", ops)
	}
	// Line 2 is the torn line with the done event glued to it; line 4 is
	// empty; line 5 is JSON but no event.
	if len(bad) != 3 || bad[0].Line != 2 || bad[1].Line != 3 || bad[2].Line != 5 {
		t.Errorf("bad lines = %+v, want lines 2, 3 and 5", bad)
	} else if bad[0].Text != `{"time":"2026-11-22T09:15:03Z","id":"a","op":"do` {
		t.Errorf("torn part reported as %q", bad[0].Text)
	}
	// Lines of other sessions are checked too, but not returned.
	ev, bad, _ = b.Events("zzz")
	if len(ev) != 0 || len(bad) != 2 {
		t.Errorf("Events(zzz) = %d events, bad %+v; want 0 and the 2 lines that are not JSON objects", len(ev), bad)
	}
}

func TestEventLogReasonBounded(t *testing.T) {
	b := eventlogBoard(t)
	b.NoSync = true
	long := strings.Repeat("é", 5000) + "\n\x1b[2J"
	if err := b.AppendEvent(Event{Op: "fail", ID: "a", To: "todo", Reason: long}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(b.EventLogPath())
	if len(data) > 2048 || strings.Count(string(data), "\n") != 1 {
		t.Fatalf("line of %d bytes, %d newlines", len(data), strings.Count(string(data), "\n"))
	}
	ev, bad, err := b.Events("a")
	if err != nil || len(bad) != 0 || len(ev) != 1 {
		t.Fatalf("%v %v %v", ev, bad, err)
	}
	if r := ev[0].Reason; len(r) > maxReason || !strings.HasPrefix(long, r) {
		t.Errorf("reason not cut at a character boundary: %d bytes", len(r))
	}
}

func TestWriteGitFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, GitattributesFile), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := writeGitFiles(dir, false); err != nil {
			t.Fatal(err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, GitignoreFile)); string(data) != gitignoreContent {
		t.Errorf(".gitignore = %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, GitattributesFile)); string(data) != "mine\n" {
		t.Errorf("a user's .gitattributes was replaced: %q", data)
	}
	if !strings.Contains(gitattributesContent, "/"+EventLogFile+" merge=union") {
		t.Error(".gitattributes does not make the event log merge by union")
	}
	// The ignore pattern matches the temporary files doctor knows.
	if !tempName().MatchString(".2026-11-22_09-15-03.md123456") {
		t.Error("temp file name pattern changed; update gitignoreContent")
	}
}
