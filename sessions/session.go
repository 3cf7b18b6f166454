package sessions

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"
)

// Session is one session file as listed on a board.
type Session struct {
	ID    string
	State State
	Owner string // the claimer, for State == Doing
	Meta
	Path string
	// Problem says why the frontmatter could not be read (with the line);
	// such a session is still listed and claimable, with default metadata.
	Problem string

	// What the listing cache validates an entry against.
	ino   uint64
	mtime int64
	size  int64
}

// Compare orders sessions the way next takes them: priority high to low,
// then created_at oldest first, then id.
func Compare(a, b Session) int {
	if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
		return c
	}
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// sortSessions orders sessions with Compare.
func sortSessions(list []Session) { slices.SortFunc(list, Compare) }

type sessionJSON struct {
	ID        string   `json:"id"`
	State     State    `json:"state"`
	Owner     string   `json:"owner"`
	Priority  string   `json:"priority"`
	CreatedAt string   `json:"created_at"`
	Title     string   `json:"title"`
	Tags      []string `json:"tags"`
	DependsOn []string `json:"depends_on"`
	Attempts  int      `json:"attempts,omitempty"`
	Path      string   `json:"path"`
	Problem   string   `json:"problem,omitempty"`
}

// MarshalJSON encodes the session object of pickup's --json output:
// {"id","state","owner","priority","created_at","title","tags","depends_on","path"},
// with "problem" when the frontmatter is broken.
func (s Session) MarshalJSON() ([]byte, error) {
	j := sessionJSON{
		ID: s.ID, State: s.State, Owner: s.Owner, Priority: s.Priority.String(),
		Title: s.Title, Tags: s.Tags, DependsOn: s.DependsOn, Attempts: s.Attempts,
		Path: s.Path, Problem: s.Problem,
	}
	if !s.CreatedAt.IsZero() {
		j.CreatedAt = s.CreatedAt.UTC().Format(time.RFC3339)
	}
	if j.Tags == nil {
		j.Tags = []string{}
	}
	if j.DependsOn == nil {
		j.DependsOn = []string{}
	}
	return json.Marshal(j)
}
