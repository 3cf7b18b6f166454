package gitremote

import (
	"testing"

	"github.com/pickup-dev/pickup/sessions"
)

// TestRepeated: a done stands at the remote when the remote's last
// transition of the session is the same owner's done (its first push
// landed, its answer was lost), and only then; a release never does.
func TestRepeated(t *testing.T) {
	log := []byte(`{"time":"2026-12-02T03:00:00Z","id":"a","op":"new","from":"","to":"todo"}
{"time":"2026-12-02T03:00:01Z","id":"a","op":"claim","from":"todo","to":"doing/bob","owner":"bob"}
{"time":"2026-12-02T03:00:01Z","id":"b","op":"claim","from":"todo","to":"doing/bob","owner":"bob"}
{"time":"2026-12-02T03:00:02Z","id":"a","op":"done","from":"doing/bob","to":"done","owner":"bob"}
{"time":"2026-12-02T03:00:03Z","id":"b","op":"release","from":"doing/bob","to":"todo","owner":"bob"}
{"time":"2026-12-02T03:00:04Z","id":"b","op":"next","from":"todo","to":"doing/ann","owner":"ann"}
{"time":"2026-12-02T03:00:05Z","id":"b","op":"done","from":"doing/ann","to":"done","owner":"ann"}
{"time":"2026-12-02T03:00:06Z","id":"d","op":"release","from":"doing/bob","to":"todo","owner":"bob"}
`)
	for _, c := range []struct {
		e    sessions.Event
		want bool
	}{
		{sessions.Event{ID: "a", Op: "done", From: "doing/bob", To: "done", Owner: "bob"}, true},
		{sessions.Event{ID: "a", Op: "done", From: "doing/ann", To: "done", Owner: "ann"}, false}, // bob's, not ann's
		{sessions.Event{ID: "b", Op: "done", From: "doing/bob", To: "done", Owner: "bob"}, false}, // ann finished it after bob let go
		{sessions.Event{ID: "b", Op: "release", From: "doing/bob", To: "todo", Owner: "bob"}, false},
		{sessions.Event{ID: "d", Op: "release", From: "doing/bob", To: "todo", Owner: "bob"}, false}, // bob's release is d's last: still not a repeat
		{sessions.Event{ID: "a", Op: "claim", From: "todo", To: "doing/bob", Owner: "bob"}, false},   // not a done or release
		{sessions.Event{ID: "c", Op: "done", From: "doing/bob", To: "done", Owner: "bob"}, false},
	} {
		if got := repeated(log, c.e); got != c.want {
			t.Errorf("repeated(%s %s by %s) = %v, want %v", c.e.Op, c.e.ID, c.e.Owner, got, c.want)
		}
	}
}
