package boardview

import (
	"fmt"
	"slices"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// Filter narrows what the board shows; its zero value shows everything.
type Filter struct {
	Owner string
	Tag   string
	State sessions.State // todo, doing or failed; "" for all
}

func (f Filter) empty() bool { return f == Filter{} }

// keeps reports whether the filter lets it through.
func (f Filter) keeps(it *Item) bool {
	if f.Owner != "" && it.Owner != f.Owner {
		return false
	}
	if f.State != "" && it.State != f.State {
		return false
	}
	return f.Tag == "" || slices.Contains(it.Tags, f.Tag)
}

// Mode is what fills the screen.
type Mode int

// Modes.
const (
	ModeBoard  Mode = iota
	ModeDetail      // one session: its file and its history
	ModeHelp
)

// Detail is an opened session, as the feed read it.
type Detail struct {
	ID      string
	Text    string // the file
	History []sessions.Event
	Err     string
}

// UI is what the person looking at the board chose: filter, selection,
// mode. Like State, it is pure: Key changes it, Render shows it.
type UI struct {
	Filter   Filter
	Selected string // a session id; stays on that session across updates
	Mode     Mode
	Detail   *Detail
	Scroll   int // first line of the detail shown

	// rows are the selectable session ids in screen order at the last
	// render (Key moves the selection among them).
	rows []string
}

// Action is what a key asks of the program beyond the UI.
type Action int

// Actions.
const (
	None Action = iota
	Quit
	Open // read UI.Selected's file and history (then set Detail)
)

// Key handles one key press (as bubbletea names keys: "up", "enter",
// "ctrl+c", "q", ...).
func (u *UI) Key(s *State, now time.Time, key string) Action {
	switch key {
	case "ctrl+c", "q":
		return Quit
	}
	switch u.Mode {
	case ModeHelp:
		u.Mode = ModeBoard
		return None
	case ModeDetail:
		switch key {
		case "esc", "backspace", "left", "h", "enter":
			u.Mode, u.Detail, u.Scroll = ModeBoard, nil, 0
		case "up", "k":
			u.Scroll = max(u.Scroll-1, 0)
		case "down", "j":
			u.Scroll++
		case "pgup":
			u.Scroll = max(u.Scroll-10, 0)
		case "pgdown", "space":
			u.Scroll += 10
		case "home", "g":
			u.Scroll = 0
		}
		return None
	}
	switch key {
	case "?":
		u.Mode = ModeHelp
	case "up", "k":
		u.move(-1)
	case "down", "j":
		u.move(1)
	case "home", "g":
		if len(u.rows) > 0 {
			u.Selected = u.rows[0]
		}
	case "end", "G":
		if len(u.rows) > 0 {
			u.Selected = u.rows[len(u.rows)-1]
		}
	case "enter", "right", "l":
		if u.Selected != "" {
			if _, ok := s.Item(u.Selected); ok {
				u.Mode, u.Scroll, u.Detail = ModeDetail, 0, &Detail{ID: u.Selected}
				return Open
			}
		}
	case "o":
		u.Filter.Owner = cycle(s.names(now), u.Filter.Owner)
	case "t":
		u.Filter.Tag = cycle(s.tags(), u.Filter.Tag)
	case "s":
		u.Filter.State = sessions.State(cycle([]string{string(sessions.Todo), string(sessions.Doing), string(sessions.Failed)}, string(u.Filter.State)))
	case "x", "esc":
		u.Filter = Filter{}
	}
	return None
}

// cycle returns the value after cur in values, "" (no filter) after the
// last one.
func cycle(values []string, cur string) string {
	if cur == "" {
		if len(values) == 0 {
			return ""
		}
		return values[0]
	}
	i := slices.Index(values, cur)
	if i < 0 || i+1 >= len(values) {
		return ""
	}
	return values[i+1]
}

func (u *UI) move(d int) {
	if len(u.rows) == 0 {
		return
	}
	i := slices.Index(u.rows, u.Selected)
	switch {
	case i < 0 && d > 0:
		i = 0
	case i < 0:
		i = len(u.rows) - 1
	default:
		i = min(max(i+d, 0), len(u.rows)-1)
	}
	u.Selected = u.rows[i]
}

// labelAge is how the header says how old the view is: to the second for
// the first ten seconds, then to ten seconds, the minute, the hour, so
// that an idle board redraws for it less and less often (see
// NextRedraw).
func labelAge(d time.Duration) string {
	switch {
	case d < time.Second:
		return "just now"
	case d < 10*time.Second:
		return fmt.Sprintf("%ds ago", d/time.Second)
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", d/(10*time.Second)*10)
	default:
		return ageText(d) + " ago"
	}
}

// ageText is a duration as the board shows ages: 12s, 5m, 3h, 4d.
func ageText(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", d/time.Second)
	case d < time.Hour:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", d/time.Hour)
	default:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
}

// NextRedraw is when the board's age label (and the ages beside it)
// next changes, for a view last updated at updated: the only redraw an
// idle board does. Within an hour it is once a minute, then once an hour.
func NextRedraw(updated, now time.Time) time.Time {
	d := now.Sub(updated)
	var step time.Duration
	switch {
	case d < 10*time.Second:
		step = time.Second
	case d < time.Minute:
		step = 10 * time.Second
	case d < time.Hour:
		step = time.Minute
	default:
		step = time.Hour
	}
	return updated.Add((d/step + 1) * step)
}
