package boardview

import (
	"slices"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// Item is a session as the board shows it.
type Item struct {
	sessions.Session
	// Since is when it arrived where it is: claimed (doing), set aside
	// (failed), finished (done), put in todo.
	Since time.Time
	// LastError is a set-aside session's last error.
	LastError string
	// Waits is what a todo session waits on (see sessions.Deps).
	Waits sessions.Waits
}

// Owner is an owner as pickup status judges it.
type Owner struct {
	Name   string
	State  claim.OwnerState // "" until judged
	Reason string
	// Host is the machine of its first process; "" if it has none here.
	Host string
	// Elsewhere: it works from another clone of a shared board (its
	// lease here has no process; its heartbeat is when this clone saw its
	// heartbeat ref move).
	Elsewhere bool
	// LeaseCreated and Heartbeat are zero without a lease.
	LeaseCreated, Heartbeat time.Time
}

// Lock is a held named lock and how many wait for it.
type Lock struct {
	claim.LockInfo
	Waiters int
}

// Snapshot is the whole board read at one time.
type Snapshot struct {
	At       time.Time
	Dir      string
	Shared   string // the remote of a shared board; "" if local
	Items    []Item // every state, done included
	Owners   []Owner
	Locks    []Lock
	History  []sessions.Event // the event log, oldest first
	Stale    time.Duration    // the stale period owners are judged with
	Watching bool             // the watcher runs
	// DBErr: the database of a PostgreSQL board did not answer when the
	// snapshot was read (it shows the board directory's last view).
	DBErr string
}

// State is what the board shows: a snapshot with the events since folded
// in. It knows nothing of files or terminals; Apply is its only way to
// change.
type State struct {
	Dir     string
	Shared  string
	Stale   time.Duration
	items   map[string]*Item
	owners  map[string]*Owner
	locks   []Lock
	history []sessions.Event // the tail, oldest first
	done    []time.Time      // times of done events, oldest first
	// Updated is when the board was last known to be current: the last
	// event seen, or on a shared board the last fetch.
	Updated time.Time
	// WatchErr says why the watcher stopped; FetchErr why the last fetch
	// of a shared board failed. Either means the view may be stale.
	WatchErr, FetchErr string
	// DBErr says why the database of a PostgreSQL board does not answer,
	// since DBDown: the board shows its last view of it.
	DBErr    string
	DBDown   time.Time
	watching bool

	waiting []*Item // todo in next order; nil when it must be rebuilt
	counts  map[sessions.State]int
}

// Board keeps this much of the history.
const (
	historyKeep = 500
	doneKeep    = 4096
)

// New returns the state of snap.
func New(snap Snapshot) *State {
	s := &State{}
	s.reset(snap)
	return s
}

func (s *State) reset(snap Snapshot) {
	*s = State{Dir: snap.Dir, Shared: snap.Shared, Stale: snap.Stale, Updated: snap.At, watching: snap.Watching,
		items: make(map[string]*Item, len(snap.Items)), owners: map[string]*Owner{}, locks: snap.Locks,
		counts: map[sessions.State]int{}}
	if snap.DBErr != "" {
		s.DBErr, s.DBDown = snap.DBErr, snap.At
	}
	for _, it := range snap.Items {
		s.put(it)
	}
	for _, o := range snap.Owners {
		s.owners[o.Name] = &o
	}
	s.log(snap.History)
}

func (s *State) put(it Item) {
	if old := s.items[it.ID]; old != nil {
		s.counts[old.State]--
	}
	cp := it
	s.items[it.ID] = &cp
	s.counts[it.State]++
	s.waiting = nil
}

func (s *State) log(events []sessions.Event) {
	for _, e := range events {
		if e.Op == "done" {
			s.done = append(s.done, e.Time)
		}
		if it := s.items[e.ID]; it != nil && (e.Op == "claim" || e.Op == "next") && it.State == sessions.Doing && it.Owner == e.Owner {
			it.Since = e.Time // the log's time beats the time we saw it
		}
	}
	s.history = append(s.history, events...)
	if n := len(s.history) - historyKeep; n > 0 {
		s.history = slices.Delete(s.history, 0, n)
	}
	if n := len(s.done) - doneKeep; n > 0 {
		s.done = slices.Delete(s.done, 0, n)
	}
}

// Event is something that happened on the board, as the feed saw it.
type Event interface{ apply(*State) }

// Arrived: a session arrived in Item.State (a claim, a release, a reap, a
// done, a set-aside, a new session; on a shared board also one made or
// moved in another clone).
type Arrived struct {
	At   time.Time
	Item Item
}

// Removed: a session's file is gone from State (and Owner, in doing/).
// The session may have arrived elsewhere first (a shared board's fetch
// writes the new place before it deletes the old): only the file where
// the board has it counts.
type Removed struct {
	At    time.Time
	ID    string
	State sessions.State
	Owner string
}

// Judged: an owner judged anew (a heartbeat, a death, a lease going
// stale, an owner arriving from another clone).
type Judged struct {
	At    time.Time
	Owner Owner
}

// Forgotten: an owner's lease is gone.
type Forgotten struct {
	At   time.Time
	Name string
}

// LocksListed: the named locks as they are now.
type LocksListed struct {
	At    time.Time
	Locks []Lock
}

// Logged: lines appended to the event log.
type Logged struct {
	At     time.Time
	Events []sessions.Event
}

// WaitsFound: what each todo session waits on now (those absent wait on
// nothing).
type WaitsFound struct {
	At    time.Time
	Waits map[string]sessions.Waits
}

// FeedStatus: the watcher stopped (WatchErr), a shared board's fetch
// failed (FetchErr), the database of a PostgreSQL board did not answer
// (DBErr), or the board was brought in line with its remote or database
// (Fetched, which clears FetchErr and DBErr).
type FeedStatus struct {
	At                 time.Time
	WatchErr, FetchErr string
	DBErr              string
	Fetched            time.Time
}

// Rescanned: the board read again whole (the watcher lost events).
type Rescanned struct{ Snapshot Snapshot }

func (e Arrived) apply(s *State) {
	it := e.Item
	if it.Since.IsZero() {
		it.Since = e.At
	}
	if old := s.items[it.ID]; old != nil && it.Waits.On == nil && it.State == sessions.Todo && old.State == sessions.Todo {
		it.Waits = old.Waits // until the next WaitsFound
	}
	s.put(it)
	s.seen(e.At)
}

func (e Removed) apply(s *State) {
	if it, ok := s.items[e.ID]; ok && (e.State == "" || it.State == e.State && it.Owner == e.Owner) {
		s.counts[it.State]--
		delete(s.items, e.ID)
		s.waiting = nil
	}
	s.seen(e.At)
}

func (e Judged) apply(s *State) {
	o := e.Owner
	s.owners[o.Name] = &o
	s.seen(e.At)
}

func (e Forgotten) apply(s *State) {
	delete(s.owners, e.Name)
	s.seen(e.At)
}

func (e LocksListed) apply(s *State) {
	s.locks = e.Locks
	s.seen(e.At)
}

func (e Logged) apply(s *State) {
	s.log(e.Events)
	s.seen(e.At)
}

func (e WaitsFound) apply(s *State) {
	for _, it := range s.items {
		if it.State == sessions.Todo {
			it.Waits = e.Waits[it.ID]
		}
	}
}

func (e FeedStatus) apply(s *State) {
	if e.WatchErr != "" {
		s.WatchErr, s.watching = e.WatchErr, false
	}
	if e.FetchErr != "" {
		s.FetchErr = e.FetchErr
	}
	if e.DBErr != "" {
		if s.DBErr == "" {
			s.DBDown = e.At
		}
		s.DBErr = e.DBErr
	}
	if !e.Fetched.IsZero() {
		s.FetchErr, s.DBErr, s.DBDown = "", "", time.Time{}
		s.seen(e.Fetched)
	}
}

func (e Rescanned) apply(s *State) { s.reset(e.Snapshot) }

// seen notes that the board was current at t.
func (s *State) seen(t time.Time) {
	if t.After(s.Updated) {
		s.Updated = t
	}
}

// Apply folds events into the state, in order.
func (s *State) Apply(events ...Event) {
	for _, e := range events {
		e.apply(s)
	}
}

// Item returns the session id, if the board has it.
func (s *State) Item(id string) (Item, bool) {
	it := s.items[id]
	if it == nil {
		return Item{}, false
	}
	return *it, true
}

// Count returns how many sessions are in st.
func (s *State) Count(st sessions.State) int { return s.counts[st] }

// Waiting returns todo in the order next takes it (sessions.Compare).
func (s *State) Waiting() []*Item {
	if s.waiting == nil {
		s.waiting = []*Item{}
		for _, it := range s.items {
			if it.State == sessions.Todo {
				s.waiting = append(s.waiting, it)
			}
		}
		slices.SortFunc(s.waiting, func(a, b *Item) int { return sessions.Compare(a.Session, b.Session) })
	}
	return s.waiting
}

// Unfinished returns the sessions of todo, doing and failed: what
// sessions.Deps needs to tell what todo waits on.
func (s *State) Unfinished() []sessions.Session {
	var out []sessions.Session
	for _, it := range s.items {
		if it.State != sessions.Done {
			out = append(out, it.Session)
		}
	}
	return out
}

// HasDeps reports whether some todo session has dependencies (only then
// is there anything to wait on).
func (s *State) HasDeps() bool {
	for _, it := range s.items {
		if it.State == sessions.Todo && len(it.DependsOn) > 0 {
			return true
		}
	}
	return false
}

// Failed returns the sessions set aside, in board order.
func (s *State) Failed() []*Item { return s.inState(sessions.Failed) }

func (s *State) inState(st sessions.State) []*Item {
	var out []*Item
	for _, it := range s.items {
		if it.State == st {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b *Item) int { return sessions.Compare(a.Session, b.Session) })
	return out
}

// Locks returns the held named locks.
func (s *State) Locks() []Lock { return s.locks }

// History returns the tail of the event log, oldest first.
func (s *State) History() []sessions.Event { return s.history }

// Watching reports whether the watcher runs.
func (s *State) Watching() bool { return s.watching }

// OwnerRow is an owner with the sessions it holds.
type OwnerRow struct {
	Owner
	Holds []*Item // by claim time, oldest first
	// LastSeen is its last event in the history (an owner shown because
	// it held work recently).
	LastSeen time.Time
}

// Recent is how long an owner that holds nothing stays on the board after
// its last event.
const Recent = time.Hour

// stateRank orders owners: the dead first (they need someone), then the
// stale, the unknown and the alive.
var stateRank = map[claim.OwnerState]int{claim.OwnerDead: 0, claim.OwnerStale: 1, claim.OwnerUnknown: 2, "": 2, claim.OwnerAlive: 3}

// Owners returns every owner that holds work, has a lease, or had an
// event within Recent of now: the dead first, then by name.
func (s *State) Owners(now time.Time) []OwnerRow {
	rows := map[string]*OwnerRow{}
	row := func(name string) *OwnerRow {
		r := rows[name]
		if r == nil {
			r = &OwnerRow{Owner: Owner{Name: name}}
			if o := s.owners[name]; o != nil {
				r.Owner = *o
			}
			rows[name] = r
		}
		return r
	}
	for name := range s.owners {
		row(name)
	}
	for _, it := range s.items {
		if it.State == sessions.Doing && it.Owner != "" {
			r := row(it.Owner)
			r.Holds = append(r.Holds, it)
		}
	}
	for _, e := range s.history {
		if e.Owner != "" && now.Sub(e.Time) < Recent {
			r := row(e.Owner)
			if e.Time.After(r.LastSeen) {
				r.LastSeen = e.Time
			}
		}
	}
	out := make([]OwnerRow, 0, len(rows))
	for _, r := range rows {
		slices.SortFunc(r.Holds, func(a, b *Item) int {
			if c := a.Since.Compare(b.Since); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b OwnerRow) int {
		if c := stateRank[a.State] - stateRank[b.State]; c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Throughput counts the done events in n intervals of every ending at now,
// oldest first.
func (s *State) Throughput(now time.Time, every time.Duration, n int) []int {
	counts := make([]int, n)
	start := now.Add(-every * time.Duration(n))
	for _, t := range s.done {
		if t.Before(start) || t.After(now) {
			continue
		}
		i := int(t.Sub(start) / every)
		if i >= n {
			i = n - 1
		}
		counts[i]++
	}
	return counts
}

// Oldest returns the todo session waiting longest (created earliest), and
// the doing session held longest.
func (s *State) Oldest() (waiting, held *Item) {
	for _, it := range s.items {
		switch it.State {
		case sessions.Todo:
			if waiting == nil || sessions.Compare(sessions.Session{ID: it.ID, Meta: sessions.Meta{CreatedAt: it.CreatedAt}},
				sessions.Session{ID: waiting.ID, Meta: sessions.Meta{CreatedAt: waiting.CreatedAt}}) < 0 {
				waiting = it
			}
		case sessions.Doing:
			if held == nil || it.Since.Before(held.Since) || it.Since.Equal(held.Since) && it.ID < held.ID {
				held = it
			}
		}
	}
	return waiting, held
}

// Owners' names and tags known to the board, sorted: what the filters
// cycle through.
func (s *State) names(now time.Time) []string {
	var out []string
	for _, r := range s.Owners(now) {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

func (s *State) tags() []string {
	seen := map[string]bool{}
	for _, it := range s.items {
		if it.State == sessions.Done {
			continue
		}
		for _, t := range it.Tags {
			seen[t] = true
		}
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
