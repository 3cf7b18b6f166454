package sessions

import (
	"os"
	"time"
)

// SetAside is a session set aside in failed/ (too many failed attempts):
// why, and since when.
type SetAside struct {
	Session
	// LastError is its frontmatter's last_error: the error of the attempt
	// that set it aside.
	LastError string
	// Since is when it was set aside: the time of the last event that
	// moved it into failed/, else (no such event in the log: moved by hand,
	// a log cut short) the file's modification time, which the attempt
	// count's rewrite just before the move sets.
	Since time.Time
}

// ListSetAside lists failed/ in board order, each session with its last
// error and the time it was set aside. The event log is read only when
// failed/ holds something.
func (b *Board) ListSetAside() ([]SetAside, error) {
	list, err := b.ListState(Failed, true)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	since := b.setAsideTimes()
	out := make([]SetAside, 0, len(list))
	for _, s := range list {
		x := SetAside{Session: s, LastError: lastError(s.Path)}
		if t, ok := since[s.ID]; ok {
			x.Since = t
		} else if info, err := os.Stat(s.Path); err == nil {
			x.Since = info.ModTime().UTC()
		}
		out = append(out, x)
	}
	return out, nil
}

// setAsideTimes maps each session that the event log shows moving into
// failed/ to the time of the last such move. A log that cannot be read
// gives none: the callers fall back on the files.
func (b *Board) setAsideTimes() map[string]time.Time {
	events, _, err := b.Events("")
	if err != nil {
		return nil
	}
	out := map[string]time.Time{}
	for _, e := range events {
		if e.To == string(Failed) && e.Time.After(out[e.ID]) {
			out[e.ID] = e.Time
		}
	}
	return out
}

// lastError reads last_error from the frontmatter of the file at path; ""
// if it has none or cannot be read.
func lastError(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head, _, err := readHead(f)
	if err != nil {
		return ""
	}
	var raw struct {
		LastError string `yaml:"last_error"`
	}
	if decodeHead(head, &raw) != nil {
		return ""
	}
	return raw.LastError
}
