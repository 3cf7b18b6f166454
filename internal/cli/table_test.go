package cli

import (
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/pickup-dev/pickup/sessions"
)

// TestPrintTableLaysOutLikeTabwriter compares printTable with the
// text/tabwriter layout it replaced, on sessions of every state with
// owners, ids and titles of varied widths, marks and dependencies.
func TestPrintTableLaysOutLikeTabwriter(t *testing.T) {
	tests := []struct {
		name string
		list []sessions.Session
	}{
		{name: "empty"},
		{name: "one", list: []sessions.Session{{ID: "a", State: sessions.Todo, Meta: sessions.Meta{Title: "Fix"}}}},
		{name: "mixed", list: func() []sessions.Session {
			var list []sessions.Session
			states := []sessions.State{sessions.Todo, sessions.Doing, sessions.Done, sessions.Failed}
			for i := range 40 {
				s := sessions.Session{
					ID:    fmt.Sprintf("2026-11-22_09-15-%02d%s", i, strings.Repeat("-9", i%3)),
					State: states[i%4],
					Meta:  sessions.Meta{Priority: sessions.Priority(i%3 - 1), Title: strings.Repeat("tïtle ", i%5)},
				}
				if s.State == sessions.Doing {
					s.Owner = strings.Repeat("agent", 1+i%3)
				}
				if i%7 == 0 {
					s.Problem = "line 2: broken"
				}
				if i%9 == 0 {
					s.Title = "bell\a and tab\t"
				}
				list = append(list, s)
			}
			return list
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			waits := map[int]sessions.Waits{}
			if len(tt.list) > 5 {
				waits[3] = sessions.Waits{On: []string{"x", "y"}}
				waits[5] = sessions.Waits{On: []string{"x", "y"}, Missing: []string{"y"}, Cycle: []string{"a", "x", "a"}}
			}
			var got strings.Builder
			if err := printTable(&got, tt.list, waits, nil); err != nil {
				t.Fatal(err)
			}
			var want strings.Builder
			tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "STATE\tOWNER\tPRIORITY\tID\tTITLE")
			for i, s := range tt.list {
				mark, owner := "", s.Owner
				if s.Problem != "" {
					mark = "! "
				}
				if owner == "" {
					owner = "-"
				}
				title := sanitize(s.Title)
				if w := waits[i]; len(w.On) > 0 {
					title += " (waits on " + strings.Join(w.On, ", ")
					if len(w.Missing) > 0 {
						title += "; " + strings.Join(w.Missing, ", ") + " does not exist"
					}
					if len(w.Cycle) > 0 {
						title += "; dependency cycle " + strings.Join(w.Cycle, " -> ")
					}
					title += ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\t%s\n", s.State, owner, s.Priority, mark, s.ID, title)
			}
			tw.Flush()
			if got.String() != want.String() {
				t.Errorf("printTable:\n%s\ntabwriter:\n%s", got.String(), want.String())
			}
		})
	}
}
