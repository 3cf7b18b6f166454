package boardview

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

func ownerRow(t *testing.T, s *State, name string) OwnerRow {
	t.Helper()
	for _, r := range s.Owners(now) {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("owner %s is not on the board", name)
	return OwnerRow{}
}

func holds(r OwnerRow) []string {
	var ids []string
	for _, it := range r.Holds {
		ids = append(ids, it.ID)
	}
	return ids
}

func waitingIDs(s *State) []string {
	var ids []string
	for _, it := range s.Waiting() {
		ids = append(ids, it.ID)
	}
	return ids
}

func TestFold(t *testing.T) {
	const (
		fix   = "2026-11-27_09-00-00" // todo, high, first in line
		docs  = "2026-11-27_10-50-00" // todo, waits on fix
		held  = "2026-11-27_11-10-00" // doing/agent-2 (dead)
		mine  = "2026-11-27_11-05-00" // doing/agent-1
		fresh = "2026-11-27_11-59-00" // made in another clone
	)
	at := now.Add(time.Second)
	claimed := func(id, owner string) Item {
		it := item(id, sessions.Doing, owner, sessions.High, 3*time.Hour, "Fix the login race", "auth", "bug")
		it.Since = time.Time{}
		return it
	}
	tests := []struct {
		name   string
		events []Event
		check  func(t *testing.T, s *State)
	}{
		{"claim", []Event{
			Arrived{At: at, Item: claimed(fix, "agent-1")},
			Logged{At: at, Events: []sessions.Event{{Time: at.Add(-100 * time.Millisecond), ID: fix, Op: "next", From: "todo", To: "doing/agent-1", Owner: "agent-1"}}},
		}, func(t *testing.T, s *State) {
			if got := holds(ownerRow(t, s, "agent-1")); !slices.Contains(got, fix) {
				t.Errorf("agent-1 holds %v, want %s among them", got, fix)
			}
			if slices.Contains(waitingIDs(s), fix) {
				t.Errorf("%s still waits after its claim", fix)
			}
			it, _ := s.Item(fix)
			if want := at.Add(-100 * time.Millisecond); !it.Since.Equal(want) {
				t.Errorf("held since %v, want the log's %v", it.Since, want)
			}
			if !s.Updated.Equal(at) {
				t.Errorf("updated %v, want %v", s.Updated, at)
			}
		}},
		{"heartbeat", []Event{
			Judged{At: at, Owner: Owner{Name: "agent-3", State: claim.OwnerUnknown, Reason: "last heartbeat 1s ago", Host: "laptop", LeaseCreated: ago(45 * time.Minute), Heartbeat: at}},
		}, func(t *testing.T, s *State) {
			r := ownerRow(t, s, "agent-3")
			if r.State != claim.OwnerUnknown || !r.Heartbeat.Equal(at) {
				t.Errorf("agent-3 is %s with heartbeat %v, want unknown at %v", r.State, r.Heartbeat, at)
			}
		}},
		{"death", []Event{
			Judged{At: at, Owner: Owner{Name: "agent-1", State: claim.OwnerDead, Reason: "pid 4100 exited", Host: "build-1"}},
		}, func(t *testing.T, s *State) {
			rows := s.Owners(now)
			if rows[0].State != claim.OwnerDead || rows[1].State != claim.OwnerDead {
				t.Errorf("the dead do not come first: %s %s, %s %s", rows[0].Name, rows[0].State, rows[1].Name, rows[1].State)
			}
			if got := holds(ownerRow(t, s, "agent-1")); len(got) != 2 {
				t.Errorf("a dead owner keeps its sessions until reaped: holds %v", got)
			}
		}},
		{"reap", []Event{
			Arrived{At: at, Item: item(held, sessions.Todo, "", sessions.Medium, 50*time.Minute, "Held by a dead agent")},
			Logged{At: at, Events: []sessions.Event{{Time: at, ID: held, Op: "reap", From: "doing/agent-2", To: "todo", Owner: "agent-2", Reason: "pid 4200 exited"}}},
			Forgotten{At: at, Name: "agent-2"},
		}, func(t *testing.T, s *State) {
			if !slices.Contains(waitingIDs(s), held) {
				t.Errorf("the reaped session does not wait again: %v", waitingIDs(s))
			}
			r := ownerRow(t, s, "agent-2") // held work within the hour
			if len(r.Holds) != 0 || r.LastSeen.IsZero() {
				t.Errorf("agent-2 after the reap: holds %v, last seen %v", holds(r), r.LastSeen)
			}
			if h := s.History(); h[len(h)-1].Op != "reap" {
				t.Errorf("history tail %v, want the reap", h[len(h)-1])
			}
		}},
		{"release", []Event{
			Arrived{At: at, Item: item(mine, sessions.Todo, "", sessions.Medium, 55*time.Minute, "Second session of agent-1")},
		}, func(t *testing.T, s *State) {
			if got := holds(ownerRow(t, s, "agent-1")); slices.Contains(got, mine) {
				t.Errorf("agent-1 still holds the released %s", mine)
			}
			if !slices.Contains(waitingIDs(s), mine) {
				t.Errorf("the released session does not wait")
			}
		}},
		{"done", []Event{
			Arrived{At: at, Item: item(mine, sessions.Done, "", sessions.Medium, 55*time.Minute, "Second session of agent-1")},
			Logged{At: at, Events: []sessions.Event{{Time: at, ID: mine, Op: "done", From: "doing/agent-1", To: "done", Owner: "agent-1"}}},
		}, func(t *testing.T, s *State) {
			if done, doing := s.Count(sessions.Done), s.Count(sessions.Doing); done != 9 || doing != 4 {
				t.Errorf("%d done and %d doing, want 9 and 4", done, doing)
			}
			c := s.Throughput(at, sparkEvery, 24)
			if c[len(c)-1] != 2 { // the fixture's newest done is 3 minutes old
				t.Errorf("throughput %v: the last interval should count 2", c)
			}
		}},
		{"fail", []Event{
			Arrived{At: at, Item: Item{Session: sessions.Session{ID: mine, State: sessions.Failed, Meta: sessions.Meta{Title: "x", Attempts: 3}}, LastError: "exit status 2"}},
		}, func(t *testing.T, s *State) {
			f := s.Failed()
			if len(f) != 2 || !slices.ContainsFunc(f, func(it *Item) bool { return it.ID == mine && it.LastError == "exit status 2" && it.Since.Equal(at) }) {
				t.Errorf("failed: %v", f)
			}
		}},
		{"lock", []Event{
			LocksListed{At: at, Locks: []Lock{{LockInfo: claim.LockInfo{Key: "deploy", Owner: "agent-3", State: "stale"}, Waiters: 1}}},
		}, func(t *testing.T, s *State) {
			if l := s.Locks(); len(l) != 1 || l[0].Key != "deploy" || l[0].Waiters != 1 {
				t.Errorf("locks %v", l)
			}
		}},
		{"a session arriving from another clone", []Event{
			Arrived{At: at, Item: item(fresh, sessions.Doing, "peer-c", sessions.Medium, time.Minute, "Made and claimed in clone B")},
			Judged{At: at, Owner: Owner{Name: "peer-c", State: claim.OwnerUnknown, Reason: "no process recorded; last heartbeat 0s ago", Elsewhere: true, LeaseCreated: at, Heartbeat: at}},
		}, func(t *testing.T, s *State) {
			r := ownerRow(t, s, "peer-c")
			if !r.Elsewhere || !slices.Contains(holds(r), fresh) {
				t.Errorf("peer-c: elsewhere %v, holds %v", r.Elsewhere, holds(r))
			}
		}},
		{"removed", []Event{Removed{At: at, ID: fix, State: sessions.Todo}}, func(t *testing.T, s *State) {
			if _, ok := s.Item(fix); ok || slices.Contains(waitingIDs(s), fix) {
				t.Errorf("%s is still on the board", fix)
			}
		}},
		{"removed from where it was, after it arrived elsewhere", []Event{
			Arrived{At: at, Item: claimed(fix, "peer-b")},
			Removed{At: at, ID: fix, State: sessions.Todo},
		}, func(t *testing.T, s *State) {
			if got := holds(ownerRow(t, s, "peer-b")); !slices.Contains(got, fix) {
				t.Errorf("the removal of the old todo file took the claim off the board: peer-b holds %v", got)
			}
		}},
		{"what waits, once its dependency is done", []Event{
			Arrived{At: at, Item: item(fix, sessions.Done, "", sessions.High, 3*time.Hour, "Fix the login race")},
			WaitsFound{At: at, Waits: map[string]sessions.Waits{"2026-11-27_10-30-00": {On: []string{"ghost"}, Missing: []string{"ghost"}}}},
		}, func(t *testing.T, s *State) {
			it, _ := s.Item(docs)
			if len(it.Waits.On) != 0 {
				t.Errorf("%s still waits on %v", docs, it.Waits.On)
			}
			it, _ = s.Item("2026-11-27_10-30-00")
			if !it.Waits.Forever() {
				t.Errorf("the session waiting on a missing id no longer waits forever")
			}
		}},
		{"the watcher stops", []Event{FeedStatus{At: at, WatchErr: "inotify: too many open files"}}, func(t *testing.T, s *State) {
			if why := staleWhy(s); !strings.Contains(why, "watcher stopped") {
				t.Errorf("stale warning %q", why)
			}
		}},
		{"a fetch fails, then succeeds", []Event{
			FeedStatus{At: at, FetchErr: "fetch: remote origin: connection refused"},
		}, func(t *testing.T, s *State) {
			if why := staleWhy(s); !strings.Contains(why, "fetch failing") {
				t.Errorf("stale warning %q", why)
			}
			s.Apply(FeedStatus{At: at.Add(time.Second), Fetched: at.Add(time.Second)})
			if why := staleWhy(s); why != "" || !s.Updated.Equal(at.Add(time.Second)) {
				t.Errorf("after a good fetch: warning %q, updated %v", why, s.Updated)
			}
		}},
		{"rescan", []Event{Rescanned{Snapshot: Snapshot{At: at, Dir: "/b", Watching: true, Items: []Item{item(fresh, sessions.Todo, "", sessions.Medium, time.Minute, "only")}}}},
			func(t *testing.T, s *State) {
				if got := waitingIDs(s); !slices.Equal(got, []string{fresh}) || s.Count(sessions.Doing) != 0 {
					t.Errorf("after a rescan: waiting %v, %d doing", got, s.Count(sessions.Doing))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(fixture())
			s.Apply(tt.events...)
			tt.check(t, s)
		})
	}
}

func TestWaitingInNextOrder(t *testing.T) {
	s := New(fixture())
	want := []string{"2026-11-27_09-00-00", "2026-11-27_10-30-00", "2026-11-27_09-30-00", "2026-11-27_10-00-00",
		"2026-11-27_10-20-00", "2026-11-27_10-40-00", "2026-11-27_10-50-00", "2026-11-27_10-10-00"}
	if got := waitingIDs(s); !slices.Equal(got, want) {
		t.Errorf("waiting %v\nwant    %v", got, want)
	}
}

// The selection stays on its session while the board moves around it.
func TestSelectionStays(t *testing.T) {
	s := New(fixture())
	u := &UI{}
	o := Options{Width: 120, Height: 40, Now: now}
	Render(s, u, o)
	const pick = "2026-11-27_10-20-00"
	for u.Selected != pick {
		before := u.Selected
		u.Key(s, now, "down")
		Render(s, u, o)
		if u.Selected == before {
			t.Fatalf("down stopped at %q before reaching %s", before, pick)
		}
	}
	s.Apply(
		Arrived{At: now, Item: item("2026-11-27_11-58-00", sessions.Todo, "", sessions.High, time.Minute, "Jumps the queue")},
		Arrived{At: now, Item: item("2026-11-27_09-00-00", sessions.Doing, "agent-3", sessions.High, 3*time.Hour, "Fix the login race")},
	)
	got := Render(s, u, o)
	if u.Selected != pick {
		t.Fatalf("selection moved to %s", u.Selected)
	}
	var marked string
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "▸") {
			marked = l
		}
	}
	if !strings.Contains(marked, pick) {
		t.Errorf("the marked row is %q, want %s", marked, pick)
	}
	u.Key(s, now, "down")
	if u.Selected == pick {
		t.Errorf("down did not move")
	}
}

func TestFilters(t *testing.T) {
	s := New(fixture())
	u := &UI{}
	o := Options{Width: 120, Height: 40, Now: now}
	u.Key(s, now, "o") // the first owner by name: agent-0
	u.Key(s, now, "o") // agent-1
	got := Plain(s, u, o)
	if u.Filter.Owner != "agent-1" || strings.Contains(got, "agent-2") || !strings.Contains(got, "filter: owner=agent-1") {
		t.Errorf("owner filter %q:\n%s", u.Filter.Owner, got)
	}
	u.Key(s, now, "x")
	u.Key(s, now, "t") // auth
	got = Plain(s, u, o)
	if u.Filter.Tag != "auth" || strings.Contains(got, "Cycle A") || !strings.Contains(got, "Fix the login race") {
		t.Errorf("tag filter %q:\n%s", u.Filter.Tag, got)
	}
	u.Key(s, now, "x")
	u.Key(s, now, "s")
	u.Key(s, now, "s") // doing
	got = Plain(s, u, o)
	if u.Filter.State != sessions.Doing || strings.Contains(got, "WAITING") || !strings.Contains(got, "OWNERS") {
		t.Errorf("state filter %q:\n%s", u.Filter.State, got)
	}
	if u.Key(s, now, "q") != Quit || u.Key(s, now, "ctrl+c") != Quit {
		t.Errorf("q and ctrl+c do not quit")
	}
}

func TestNextRedraw(t *testing.T) {
	for _, tt := range []struct {
		age, next time.Duration
		label     string
	}{
		{0, time.Second, "just now"},
		{3500 * time.Millisecond, 4 * time.Second, "3s ago"},
		{15 * time.Second, 20 * time.Second, "10s ago"},
		{75 * time.Second, 2 * time.Minute, "1m ago"},
		{3 * time.Hour, 4 * time.Hour, "3h ago"},
	} {
		updated := now.Add(-tt.age)
		if got := NextRedraw(updated, now).Sub(updated); got != tt.next {
			t.Errorf("age %v: next redraw at age %v, want %v", tt.age, got, tt.next)
		}
		if got := labelAge(tt.age); got != tt.label {
			t.Errorf("age %v: label %q, want %q", tt.age, got, tt.label)
		}
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"plain title":              "plain title",
		"a\x1b[2Jb":                `a\x1b[2Jb`,
		"\x1b]52;c;aGk=\x07":       `\x1b]52;c;aGk=\x07`,
		"tab\there":                "tab here",
		"\u202eevil":               `\u202eevil`,
		"\u009b2J":                 `\u009b2J`,
		"bad \xff":                 `bad \xff`,
		"修复 🚀":                     "修复 🚀",
		"line\nbreak\r":            `line\x0abreak\x0d`,
		"\u2066\u2069\u200e\u061c": `\u2066\u2069\u200e\u061c`,
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}
