package sessions

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// historyBoard is a board with session s1 at place (its file written by
// hand) and the given lines in its event log.
func historyBoard(t *testing.T, place Place, log string) *Board {
	t.Helper()
	b := eventlogBoard(t)
	if place.State != "" {
		if err := os.MkdirAll(b.StateDir(place.State, place.Owner), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(b.Path(place.State, place.Owner, "s1"), []byte("---\ntitle: s1\n---\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(b.EventLogPath(), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCheckHistory(t *testing.T) {
	const (
		newS1   = `{"time":"2026-11-22T09:00:00Z","id":"s1","op":"new","from":"","to":"todo"}` + "\n"
		claimS1 = `{"time":"2026-11-22T09:00:01Z","id":"s1","op":"claim","from":"todo","to":"doing/alice","owner":"alice"}` + "\n"
		// A copy moved aside by doctor says nothing of where s1 is.
		asideS1 = `{"time":"2026-11-22T09:00:02Z","id":"s1","op":"doctor","from":"todo","to":"conflicts/s1.todo.md"}` + "\n"
		future  = `{"time":"2999-01-01T00:00:00Z","id":"s1","op":"claim","from":"todo","to":"doing/alice","owner":"alice"}` + "\n"
		torn    = `{"time":"2026-11-22T09:00:03Z","id":"s9","op":"do`
	)
	alice := Place{State: Doing, Owner: "alice"}
	tests := []struct {
		name  string
		place Place
		log   string
		want  []string // kind:line of each finding, in order
		fixed int      // how many --fix resolves
		after string   // with --fix: the last event of s1 goes here
	}{
		{name: "history ends where the session is", place: alice, log: newS1 + claimS1},
		{name: "no history (placed by hand)", place: Place{State: Done}},
		{name: "only a discarded copy moved", place: Place{State: Done}, log: asideS1},
		// After a merge the lines are not in time order; pickup log sorts them.
		{name: "merged lines out of time order", place: alice, log: claimS1 + newS1},
		{name: "missed done", place: Place{State: Done}, log: newS1 + claimS1 + asideS1,
			want: []string{"history:0"}, fixed: 1, after: "done"},
		{name: "missed claim, clock behind the log", place: Place{State: Doing, Owner: "bob"}, log: newS1 + future,
			want: []string{"history:0"}, fixed: 1, after: "doing/bob"},
		{name: "torn line glued to the next", place: alice, log: newS1 + torn + claimS1,
			want: []string{"eventlog:2"}, fixed: 1},
		{name: "torn last line", place: alice, log: newS1 + claimS1 + torn,
			want: []string{"eventlog:3"}, fixed: 1},
		{name: "line edited by hand", place: alice, log: newS1 + "my note\n" + claimS1,
			want: []string{"eventlog:2"}},
		{name: "valid JSON that is not an event", place: alice, log: newS1 + `{"time":"x"}` + "\n" + claimS1,
			want: []string{"eventlog:2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := historyBoard(t, tt.place, tt.log)
			places := map[string]Place{}
			if tt.place.State != "" {
				tt.place.Path = b.Path(tt.place.State, tt.place.Owner, "s1")
				places["s1"] = tt.place
			}
			found, err := b.checkHistory(places, false, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := findingKeys(found); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("findings %v, want %v: %+v", got, tt.want, found)
			}
			if data, _ := os.ReadFile(b.EventLogPath()); string(data) != tt.log {
				t.Fatalf("a check without --fix changed the log:\n%s", data)
			}

			fixed, err := b.checkHistory(places, true, 0)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range fixed {
				if f.Fix != "" {
					n++
				}
			}
			if n != tt.fixed {
				t.Errorf("--fix resolved %d of %+v, want %d", n, fixed, tt.fixed)
			}
			again, err := b.checkHistory(places, false, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(again) != len(tt.want)-tt.fixed {
				t.Errorf("after --fix: %+v, want %d left", again, len(tt.want)-tt.fixed)
			}
			data, err := os.ReadFile(b.EventLogPath())
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), torn) && tt.fixed > 0 {
				t.Errorf("the torn line is still there:\n%s", data)
			}
			if tt.after == "" {
				return
			}
			events, bad, err := b.Events("s1")
			if err != nil || len(bad) != 0 {
				t.Fatalf("Events: %v, bad %v", err, bad)
			}
			last := latest(events)
			if last.Op != "doctor" || last.To != tt.after || last.Reason == "" || last.Owner != "" {
				t.Errorf("the history ends with %+v, want a doctor line with a reason to %s", last, tt.after)
			}
		})
	}
}

// TestCheckHistoryErasesInPlace: erasing a torn line leaves the lines
// around it byte for byte, and a torn last line becomes a whole blank line
// that the next append does not join.
func TestCheckHistoryErasesInPlace(t *testing.T) {
	const (
		a    = `{"time":"2026-11-22T09:00:00Z","id":"s1","op":"new","from":"","to":"todo"}`
		torn = `{"time":"2026-11-22T09:00:03Z","id":"s1","op":"cl`
	)
	b := historyBoard(t, Place{State: Todo}, a+"\n"+torn+a+"\n"+torn)
	if _, err := b.checkHistory(nil, true, 0); err != nil {
		t.Fatal(err)
	}
	spaces := strings.Repeat(" ", len(torn))
	want := a + "\n" + spaces + a + "\n" + spaces[1:] + "\n"
	data, err := os.ReadFile(b.EventLogPath())
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != want {
		t.Fatalf("log after --fix:\n%q\nwant\n%q", data, want)
	}
	if err := b.AppendEvent(Event{Op: "claim", ID: "s1", Owner: "alice", From: "todo", To: "doing/alice"}); err != nil {
		t.Fatal(err)
	}
	events, bad, err := b.Events("s1")
	if err != nil || len(bad) != 0 || len(events) != 3 {
		t.Fatalf("Events: %d events, bad %v, err %v", len(events), bad, err)
	}
}

// TestCheckHistoryWaitsForMovesInFlight: a session that moved a moment ago
// may be between its rename and its line; doctor waits for the line
// instead of recording a move of its own.
func TestCheckHistoryWaitsForMovesInFlight(t *testing.T) {
	const newS1 = `{"time":"2026-11-22T09:00:00Z","id":"s1","op":"new","from":"","to":"todo"}` + "\n"
	b := historyBoard(t, Place{State: Doing, Owner: "alice"}, newS1)
	places := map[string]Place{"s1": {State: Doing, Owner: "alice", Path: b.Path(Doing, "alice", "s1")}}
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = b.AppendEvent(Event{Op: "claim", ID: "s1", Owner: "alice", From: "todo", To: "doing/alice"})
	}()
	found, err := b.checkHistory(places, true, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 0 {
		t.Errorf("findings %+v, want none: the line came", found)
	}
	events, _, _ := b.Events("s1")
	if last := latest(events); last.Op != "claim" {
		t.Errorf("the history ends with %+v, want the claim (no doctor line)", last)
	}
}

func findingKeys(fs []Finding) []string {
	var keys []string
	for _, f := range fs {
		keys = append(keys, fmt.Sprintf("%s:%d", f.Kind, f.Line))
	}
	return keys
}

// latest is the last event in time order, as pickup log shows it.
func latest(events []Event) Event {
	var last Event
	for _, e := range events {
		if !e.Time.Before(last.Time) {
			last = e
		}
	}
	return last
}
