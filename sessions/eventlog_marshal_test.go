package sessions

import (
	"encoding/json"
	"testing"
	"time"
)

// marshalEvent writes what json.Marshal writes for an Event, and fails as
// it fails.
func TestMarshalEvent(t *testing.T) {
	base := Event{Time: time.Date(2026, 11, 25, 8, 42, 39, 536000000, time.UTC), ID: "2026-11-25_08-42-38", Op: "next", From: "todo", To: "doing/bench-next"}
	tests := map[string]func(e *Event){
		"plain":          func(e *Event) {},
		"owner, reason":  func(e *Event) { e.Owner, e.Reason = "alice", "agent crashed" },
		"zero time":      func(e *Event) { e.Time = time.Time{} },
		"offset":         func(e *Event) { e.Time = e.Time.In(time.FixedZone("x", 5*3600+1800)) },
		"no from":        func(e *Event) { e.Op, e.From = "new", "" },
		"escapes":        func(e *Event) { e.Reason = "a<b>&c \"q\" \\ \t\n\a \u2028\u2029 é \xff" },
		"src, dst":       func(e *Event) { e.Src, e.Dst = "/b/todo/x.md", "/b/done/x.md" },
		"year 10000":     func(e *Event) { e.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"negative years": func(e *Event) { e.Time = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) },
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			e := base
			change(&e)
			want, wantErr := json.Marshal(e)
			got, err := marshalEvent(e)
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("marshalEvent error %v, json.Marshal's %v", err, wantErr)
			}
			if string(got) != string(want) {
				t.Errorf("marshalEvent =\n%s\njson.Marshal =\n%s", got, want)
			}
		})
	}
}
