package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
)

// TestProgressWaiting: work's live status line on a terminal says how many
// sessions wait in todo/ (and how many of them on dependencies); while the
// queue is busy listing, the last figure stands.
func TestProgressWaiting(t *testing.T) {
	type answer struct {
		ready, blocked int
		ok             bool
	}
	tests := []struct {
		name    string
		answers []answer // Waiting's answer at each event
		want    []string // in the status line after each event
	}{
		{name: "counts", answers: []answer{{5, 0, true}, {4, 0, true}}, want: []string{"waiting 5  done", "waiting 4  done"}},
		{name: "blocked", answers: []answer{{3, 2, true}}, want: []string{"waiting 3 (+2 blocked)  done"}},
		{name: "busy listing keeps the last", answers: []answer{{7, 0, true}, {0, 0, false}}, want: []string{"waiting 7  done", "waiting 7  done"}},
		{name: "unknown yet", answers: []answer{{0, 0, false}}, want: []string{"waiting ?  done"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			p := &progress{r: &run{env: &Env{Stderr: &stderr}}, jobs: 2, start: time.Now(), terminal: true}
			i := 0
			p.waiting = func() (int, int, bool) {
				a := tt.answers[i]
				return a.ready, a.blocked, a.ok
			}
			for i = range tt.answers {
				stderr.Reset()
				p.event(claim.WorkEvent{Event: "claimed", ID: "s1", Worker: 1})
				if line := stderr.String(); !strings.Contains(line, tt.want[i]) || !strings.HasPrefix(line, "\r\x1b[Kbusy ") {
					t.Errorf("event %d: status line %q, want %q in it", i, line, tt.want[i])
				}
			}
		})
	}
}
