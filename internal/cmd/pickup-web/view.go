package main

import (
	"bytes"
	"encoding/json"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/boardview"
	"github.com/pickup-dev/pickup/sessions"
)

// The view is what the templates show: every string from the board passed
// through boardview.Clean first (the terminal board's one set of rules:
// controls and bidirectional overrides written visibly), then escaped by
// html/template. Times are Unix milliseconds; the page turns them into
// ages itself, so an idle board needs no new rendering to age.

type itemView struct {
	ID, Title, Priority, State, Owner string
	Tags                              []string
	TagsAttr                          string // for the page's filter: tags joined by a space
	Since, Created                    int64
	Waits, LastError, Problem         string
	Attempts                          int
	Actions                           bool // the page may act on it (--actions)
}

type ownerView struct {
	Name, State, Reason, Host string
	Elsewhere                 bool
	Lease, Heartbeat, Seen    int64
	Holds                     []itemView
	Reapable                  bool // dead or stale: its claims can be given back
	Actions                   bool
}

type lockView struct {
	Name, Holder, State string
	Since, Heartbeat    int64
	Waiters             int
}

type eventView struct {
	Time                         int64
	Clock                        string
	ID, Op, From, To, Owner, Why string
	Key                          string // the same for the same event in the next rendering (see patch.go)
}

type barView struct{ X, Y, H, Count int }

type boardData struct {
	Updated                     int64
	Dir, Shared                 string
	Warnings                    []string
	Owners                      []ownerView
	Waiting, Failed             []itemView
	Locks                       []lockView
	History                     []eventView
	Bars                        []barView
	SparkMax, SparkMinutes      int
	Todo, Doing, Done, SetAside int
	Known                       string // JSON {owners, tags} for the filters
	Actions                     bool
}

// historyShown is how many of the newest events the page lists.
const historyShown = 200

// sparkBars is how many intervals the throughput picture shows.
const sparkBars = 24

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func item(it *boardview.Item, actions bool) itemView {
	v := itemView{Actions: actions, ID: boardview.Clean(it.ID), Title: boardview.Clean(it.Title), Priority: it.Priority.String(),
		State: string(it.State), Owner: boardview.Clean(it.Owner), Since: ms(it.Since), Created: ms(it.CreatedAt),
		Waits: boardview.WaitsText(it.Waits), LastError: boardview.Clean(it.LastError), Problem: boardview.Clean(it.Problem), Attempts: it.Attempts}
	for _, t := range it.Tags {
		v.Tags = append(v.Tags, boardview.Clean(t))
	}
	v.TagsAttr = strings.Join(v.Tags, " ")
	return v
}

func buildView(s *boardview.State, now time.Time, actions bool) boardData {
	d := boardData{Updated: ms(s.Updated), Dir: boardview.Clean(s.Dir), Shared: boardview.Clean(s.Shared), Actions: actions,
		Todo: s.Count(sessions.Todo), Doing: s.Count(sessions.Doing), Done: s.Count(sessions.Done), SetAside: s.Count(sessions.Failed)}
	if s.WatchErr != "" {
		d.Warnings = append(d.Warnings, "the board's watcher stopped: "+boardview.Clean(s.WatchErr)+" (restart pickup serve)")
	} else if !s.Watching() {
		d.Warnings = append(d.Warnings, "the board is not watched: this view may be stale")
	}
	if s.FetchErr != "" {
		d.Warnings = append(d.Warnings, "the last fetch of the shared board failed: "+boardview.Clean(s.FetchErr)+" (changes from other machines may be missing)")
	}
	if s.DBErr != "" {
		d.Warnings = append(d.Warnings, "the database does not answer since "+s.DBDown.Format(time.TimeOnly)+": "+boardview.Clean(s.DBErr)+" (this is its last view)")
	}
	for _, r := range s.Owners(now) {
		o := ownerView{Name: boardview.Clean(r.Name), State: string(r.State), Reason: boardview.Clean(r.Reason), Host: boardview.Clean(r.Host),
			Elsewhere: r.Elsewhere, Actions: actions, Lease: ms(r.LeaseCreated), Heartbeat: ms(r.Heartbeat), Seen: ms(r.LastSeen)}
		if o.State == "" {
			o.State = "unknown"
		}
		o.Reapable = len(r.Holds) > 0 && (r.State == claim.OwnerDead || r.State == claim.OwnerStale)
		for _, it := range r.Holds {
			o.Holds = append(o.Holds, item(it, actions))
		}
		d.Owners = append(d.Owners, o)
	}
	for _, it := range s.Waiting() {
		d.Waiting = append(d.Waiting, item(it, actions))
	}
	for _, it := range s.Failed() {
		d.Failed = append(d.Failed, item(it, actions))
	}
	for _, l := range s.Locks() {
		d.Locks = append(d.Locks, lockView{Name: boardview.Clean(l.Key), Holder: boardview.Clean(l.Holder()), State: string(l.State),
			Since: ms(l.AcquiredAt), Heartbeat: ms(l.HeartbeatAt), Waiters: l.Waiters})
	}
	hist := s.History()
	// An event's key: its time, session and operation, and how many such
	// came before it among those shown (counted from the oldest shown,
	// so that an event keeps its key as newer ones come).
	first := max(0, len(hist)-historyShown)
	seen := map[string]int{}
	keys := make([]string, len(hist))
	for i := first; i < len(hist); i++ {
		e := hist[i]
		k := strconv.FormatInt(e.Time.UnixNano(), 36) + "-" + e.ID + "-" + e.Op + "-" + e.To
		keys[i] = k + "-" + strconv.Itoa(seen[k])
		seen[k]++
	}
	for i := len(hist) - 1; i >= first; i-- {
		e := hist[i]
		d.History = append(d.History, eventView{Key: boardview.Clean(keys[i]), Time: ms(e.Time), Clock: e.Time.Local().Format("15:04:05"), ID: boardview.Clean(e.ID), Op: boardview.Clean(e.Op),
			From: boardview.Clean(e.From), To: boardview.Clean(e.To), Owner: boardview.Clean(e.Owner), Why: boardview.Clean(e.Reason)})
	}
	counts := s.Throughput(now, boardview.SparkEvery, sparkBars)
	d.SparkMax = max(slices.Max(counts), 1)
	d.SparkMinutes = int(boardview.SparkEvery / time.Minute)
	for i, c := range counts {
		h := c * 40 / d.SparkMax
		if c > 0 && h == 0 {
			h = 1
		}
		d.Bars = append(d.Bars, barView{X: i * 10, Y: 40 - h, H: h, Count: c})
	}
	known := struct {
		Owners []string `json:"owners"`
		Tags   []string `json:"tags"`
	}{Owners: []string{}, Tags: []string{}}
	for _, n := range s.Names(now) {
		known.Owners = append(known.Owners, boardview.Clean(n))
	}
	for _, t := range s.Tags() {
		known.Tags = append(known.Tags, boardview.Clean(t))
	}
	j, _ := json.Marshal(known)
	d.Known = string(j)
	return d
}

// renderer renders the board's fragment with tmpl.
func renderer(tmpl *template.Template, actions bool) func(*boardview.State, time.Time) ([]byte, error) {
	return func(s *boardview.State, now time.Time) ([]byte, error) {
		var b bytes.Buffer
		err := tmpl.ExecuteTemplate(&b, "board", buildView(s, now, actions))
		return b.Bytes(), err
	}
}
