package boardview

import (
	"slices"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// now is the fixed clock of the tests.
var now = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

func item(id string, st sessions.State, owner string, prio sessions.Priority, created time.Duration, title string, tags ...string) Item {
	return Item{Session: sessions.Session{ID: id, State: st, Owner: owner, Meta: sessions.Meta{Priority: prio, CreatedAt: ago(created), Title: title, Tags: tags}},
		Since: ago(created / 2)}
}

// hostile titles: every way agent-written text could take over a terminal,
// and text that is wide but harmless.
var hostile = []string{
	"clear \x1b[2J\x1b[H and retitle \x1b]0;pwned\x07",
	"clipboard \x1b]52;c;cm0gLXJmIH4=\x07 grab",
	"bidi \u202eevil\u202c \u2066iso\u2069 \u200emark\u200f \u061calm",
	"修复登录错误 in the 認証 module",
	"🚀 ship the 👩‍💻 release ✅",
	"invalid \xff\xfe utf8 and C1 \u009b31m csi \u009d0;x\u009c",
}

func fixture() Snapshot {
	var items []Item
	add := func(it Item) { items = append(items, it) }
	add(item("2026-11-27_09-00-00", sessions.Todo, "", sessions.High, 3*time.Hour, "Fix the login race", "auth", "bug"))
	add(item("2026-11-27_09-30-00", sessions.Todo, "", sessions.Medium, 150*time.Minute, hostile[0], "evil\x1b[31m"))
	add(item("2026-11-27_10-00-00", sessions.Todo, "", sessions.Medium, 2*time.Hour, hostile[1]))
	add(item("2026-11-27_10-10-00", sessions.Todo, "", sessions.Low, 110*time.Minute, hostile[2]))
	add(item("2026-11-27_10-20-00", sessions.Todo, "", sessions.Medium, 100*time.Minute, hostile[3], "中文"))
	w := item("2026-11-27_10-30-00", sessions.Todo, "", sessions.High, 90*time.Minute, "Deploy after ghost", "ops")
	w.DependsOn = []string{"ghost"}
	w.Waits = sessions.Waits{On: []string{"ghost"}, Missing: []string{"ghost"}}
	add(w)
	c1 := item("2026-11-27_10-40-00", sessions.Todo, "", sessions.Medium, 80*time.Minute, "Cycle A")
	c1.DependsOn = []string{"2026-11-27_10-41-00"}
	c1.Waits = sessions.Waits{On: c1.DependsOn, Cycle: []string{"2026-11-27_10-40-00", "2026-11-27_10-41-00", "2026-11-27_10-40-00"}}
	add(c1)
	b := item("2026-11-27_10-50-00", sessions.Todo, "", sessions.Medium, 70*time.Minute, "Docs after the login fix", "docs")
	b.DependsOn = []string{"2026-11-27_09-00-00"}
	b.Waits = sessions.Waits{On: b.DependsOn}
	add(b)
	add(item("2026-11-27_11-00-00", sessions.Doing, "agent-1", sessions.High, 60*time.Minute, hostile[4], "release"))
	add(item("2026-11-27_11-05-00", sessions.Doing, "agent-1", sessions.Medium, 55*time.Minute, "Second session of agent-1"))
	add(item("2026-11-27_11-10-00", sessions.Doing, "agent-2", sessions.Medium, 50*time.Minute, "Held by a dead agent"))
	add(item("2026-11-27_11-15-00", sessions.Doing, "agent-3", sessions.Low, 45*time.Minute, "Held by a silent agent"))
	add(item("2026-11-27_11-20-00", sessions.Doing, "peer-b", sessions.Medium, 40*time.Minute, "Claimed in the other clone"))
	f := item("2026-11-27_08-00-00", sessions.Failed, "", sessions.Medium, 4*time.Hour, hostile[5])
	f.Attempts, f.LastError = 3, "exit status 1: \x1b[31mpanic\x1b[0m: boom\nsecond line"
	add(f)
	var history []sessions.Event
	for i := range 8 {
		id := time.Date(2026, 11, 27, 7, i, 0, 0, time.UTC).Format("2006-01-02_15-04-05")
		add(item(id, sessions.Done, "", sessions.Medium, 5*time.Hour, "Finished "+id))
		t := ago(time.Duration(8*i+3) * time.Minute)
		history = append(history,
			sessions.Event{Time: t.Add(-time.Minute), ID: id, Op: "next", From: "todo", To: "doing/agent-1", Owner: "agent-1"},
			sessions.Event{Time: t, ID: id, Op: "done", From: "doing/agent-1", To: "done", Owner: "agent-1"})
	}
	history = append(history,
		sessions.Event{Time: ago(2 * time.Minute), ID: "2026-11-27_09-30-00", Op: "reap", From: "doing/agent-0", To: "todo", Owner: "agent-0", Reason: "pid 4242 exited \x1b]52;c;eA==\x07"},
		sessions.Event{Time: ago(time.Minute), ID: "2026-11-27_11-20-00", Op: "claim", From: "todo", To: "doing/peer-b", Owner: "peer-b"})
	slicesSortEvents(history)
	host := proc.Process{Host: "build-1", PID: 4100, Start: 1, Exe: "/usr/bin/claude"}
	return Snapshot{
		At: ago(3 * time.Second), Dir: "/repo/.spx/sessions", Items: items, History: history, Stale: 30 * time.Minute, Watching: true,
		Owners: []Owner{
			{Name: "agent-1", State: claim.OwnerAlive, Reason: "pid 4100 (claude) on build-1 is running", Host: "build-1", LeaseCreated: ago(time.Hour), Heartbeat: ago(20 * time.Second)},
			{Name: "agent-2", State: claim.OwnerDead, Reason: "pid 4200 (claude) on build-1 exited", Host: "build-1", LeaseCreated: ago(50 * time.Minute), Heartbeat: ago(10 * time.Minute)},
			{Name: "agent-3", State: claim.OwnerStale, Reason: "pid 77 on laptop cannot be checked from here; no heartbeat for 40m0s (stale after 30m0s)", Host: "laptop", LeaseCreated: ago(45 * time.Minute), Heartbeat: ago(40 * time.Minute)},
			{Name: "peer-b", State: claim.OwnerUnknown, Reason: "no process recorded; last heartbeat 5s ago", Elsewhere: true, LeaseCreated: ago(40 * time.Minute), Heartbeat: ago(5 * time.Second)},
		},
		Locks: []Lock{{LockInfo: claim.LockInfo{Key: "repo:main", Owner: "agent-1", Process: claim.Holder(host), AcquiredAt: ago(90 * time.Second), HeartbeatAt: ago(10 * time.Second), State: "alive", Age: 90 * time.Second}, Waiters: 2}},
	}
}

func slicesSortEvents(h []sessions.Event) {
	slices.SortStableFunc(h, func(a, b sessions.Event) int { return a.Time.Compare(b.Time) })
}
