package cli

import (
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// setAsideStatus is one session of `pickup status --failed --json`.
type setAsideStatus struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Attempts  int    `json:"attempts"`
	LastError string `json:"last_error"`
	// SetAsideAt is when it was set aside (see sessions.SetAside.Since).
	SetAsideAt string `json:"set_aside_at,omitempty"`
	Path       string `json:"path"`
}

// printSetAside prints the sessions set aside in failed/, after status's
// owners (alone, for --failed), or as a JSON array with --json.
func (r *run) printSetAside(b *sessions.Board, alone bool) error {
	list, err := b.ListSetAside()
	if err != nil {
		return err
	}
	if r.json {
		out := make([]setAsideStatus, 0, len(list))
		for _, x := range list {
			st := setAsideStatus{ID: x.ID, Title: x.Title, Attempts: x.Attempts, LastError: x.LastError, Path: x.Path}
			if !x.Since.IsZero() {
				st.SetAsideAt = x.Since.UTC().Format(time.RFC3339Nano)
			}
			out = append(out, st)
		}
		return r.printJSON(out)
	}
	if len(list) == 0 {
		if alone {
			r.printf("nothing is set aside in failed/\n")
		}
		return nil
	}
	r.printf("set aside in failed/ (%d); `pickup requeue ID` or `pickup requeue --all` returns them to todo/:\n", len(list))
	for _, x := range list {
		r.printf("  %s: %s", describe(x.Session), attemptsText(x.Attempts))
		if x.LastError != "" {
			r.printf(", last error: %s", sanitize(x.LastError))
		}
		r.printf("\n")
	}
	return nil
}
