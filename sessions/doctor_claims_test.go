package sessions

import (
	"testing"
	"time"
)

// ev builds one event at minute m of a fixed day.
func ev(m int, op, from, to string) Event {
	return Event{Time: time.Date(2026, 11, 22, 9, m, 0, 0, time.UTC), ID: "x", Op: op, From: from, To: to}
}

func copiesAt(places ...string) []copyOf {
	var cs []copyOf
	for i, p := range places {
		pl := Place{State: State(p)}
		if st, owner, ok := cutDoing(p); ok {
			pl = Place{State: st, Owner: owner}
		}
		pl.Path = "/b/" + p + "/x.md"
		cs = append(cs, copyOf{place: pl, ino: uint64(i + 1), nlink: 1})
	}
	return cs
}

func cutDoing(p string) (State, string, bool) {
	if len(p) > 6 && p[:6] == "doing/" {
		return Doing, p[6:], true
	}
	return "", "", false
}

func TestDecideKeep(t *testing.T) {
	newX := ev(0, "new", "", "todo")
	for _, tc := range []struct {
		name   string
		events []Event
		copies []string
		keep   string // "" : undecided
	}{
		{"first claim wins", []Event{newX, ev(1, "claim", "todo", "doing/zed"), ev(2, "claim", "todo", "doing/amy")},
			[]string{"doing/amy", "doing/zed"}, "doing/zed"},
		{"first claim wins, other order", []Event{newX, ev(1, "claim", "todo", "doing/amy"), ev(2, "claim", "todo", "doing/zed")},
			[]string{"doing/amy", "doing/zed"}, "doing/amy"},
		{"a stale claim's later moves are stale too", []Event{newX, ev(1, "claim", "todo", "doing/zed"), ev(2, "claim", "todo", "doing/amy"), ev(3, "release", "doing/amy", "todo")},
			[]string{"todo", "doing/zed"}, "doing/zed"},
		{"released, then claimed by another", []Event{newX, ev(1, "claim", "todo", "doing/zed"), ev(2, "release", "doing/zed", "todo"), ev(3, "claim", "todo", "doing/amy")},
			[]string{"doing/amy", "doing/zed"}, "doing/amy"},
		{"no history: undecided", nil, []string{"doing/amy", "doing/zed"}, ""},
		{"history ends elsewhere: undecided", []Event{newX, ev(1, "claim", "todo", "doing/p"), ev(2, "done", "doing/p", "done")},
			[]string{"doing/amy", "doing/zed"}, ""},
		{"a missing line does not make the chain stale", []Event{newX, ev(2, "done", "doing/zed", "done")},
			[]string{"todo", "done"}, "done"},
		{"finished work is kept over an earlier claim", []Event{newX, ev(1, "claim", "todo", "doing/zed"), ev(2, "claim", "todo", "doing/amy"), ev(3, "done", "doing/amy", "done")},
			[]string{"doing/zed", "done"}, "done"},
		{"a reopened session's done copy is not kept", []Event{newX, ev(1, "claim", "todo", "doing/zed"), ev(2, "done", "doing/zed", "done"), ev(3, "reopen", "done", "todo"), ev(4, "claim", "todo", "doing/amy")},
			[]string{"doing/amy", "done"}, "doing/amy"},
		{"released: todo beats the resurrected claim", []Event{newX, ev(1, "claim", "todo", "doing/zed"), ev(2, "release", "doing/zed", "todo")},
			[]string{"todo", "doing/zed"}, "todo"},
		{"a claim the history never names is not discarded for todo", []Event{ev(1, "release", "doing/q", "todo")},
			[]string{"todo", "doing/p"}, "doing/p"},
		{"stale todo copy beside a claim", []Event{newX, ev(1, "claim", "todo", "doing/zed")},
			[]string{"todo", "doing/zed"}, "doing/zed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := copiesAt(tc.copies...)
			d := decideKeep(cs, replayHistory(tc.events))
			got := ""
			if d.keep >= 0 {
				got = placeName(cs[d.keep].place)
			}
			if got != tc.keep {
				t.Errorf("kept %q (%s), want %q", got, d.why, tc.keep)
			}
		})
	}
}

// findGaps: a copy that doctor discarded no longer counts as where the
// history ends.
func TestFindGapsAfterDiscard(t *testing.T) {
	events := []Event{ev(0, "new", "", "todo"), ev(1, "claim", "todo", "doing/zed"), ev(2, "claim", "todo", "doing/amy"),
		ev(3, "doctor", "doing/amy", "conflicts/x.doing.amy.md")}
	places := map[string]Place{"x": {State: Doing, Owner: "zed", Path: "/b/doing/zed/x.md"}}
	if gaps := findGaps(places, events); len(gaps) != 0 {
		t.Errorf("gaps after the discard: %+v", gaps)
	}
	if gaps := findGaps(places, events[:3]); len(gaps) != 1 {
		t.Errorf("before the discard the history ends in doing/amy: gaps %+v", gaps)
	}
}
