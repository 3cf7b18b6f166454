package claim_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// TestRequeueSetAside: --all and --failed-since of pickup requeue. When a
// session was set aside comes from the event log, else from its file's
// modification time; a dry run moves nothing; a session that cannot be
// requeued (a copy in todo/ already) is reported and the others go on.
func TestRequeueSetAside(t *testing.T) {
	now := time.Now().UTC()
	tests := []struct {
		name   string
		since  time.Duration // 0: all
		dryRun bool
		want   []string
	}{
		{name: "all", want: []string{"by-event", "by-file", "conflict", "fresh"}},
		{name: "since 30m", since: 30 * time.Minute, want: []string{"by-file", "conflict", "fresh"}},
		{name: "since 5m", since: 5 * time.Minute, want: []string{"conflict", "fresh"}},
		{name: "since 5m, dry run", since: 5 * time.Minute, dryRun: true, want: []string{"conflict", "fresh"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			for _, id := range []string{"by-event", "by-file", "fresh", "conflict"} {
				pkPutRaw(t, b, sessions.Failed, "", id, []byte("---\ntitle: "+id+"\nattempts: 3\nlast_error: \"exit status 1 (attempt 3)\"\n---\n"))
			}
			// by-event's file looks fresh, but the log says 2h ago.
			if err := b.AppendEvent(sessions.Event{Time: now.Add(-2 * time.Hour), ID: "by-event", Op: "set aside", From: "doing/w", To: "failed"}); err != nil {
				t.Fatal(err)
			}
			old := now.Add(-10 * time.Minute)
			if err := os.Chtimes(b.Path(sessions.Failed, "", "by-file"), old, old); err != nil {
				t.Fatal(err)
			}
			pkPut(t, b, sessions.Todo, "", "conflict", sessions.Meta{})
			c, err := claim.New(b, "w")
			if err != nil {
				t.Fatal(err)
			}
			opts := claim.RequeueOptions{DryRun: tt.dryRun}
			if tt.since > 0 {
				opts.Since = now.Add(-tt.since)
			}
			list, err := c.RequeueSetAside(context.Background(), opts)
			if tt.dryRun != (err == nil) || (!tt.dryRun && !errors.Is(err, claim.ErrConflict)) {
				t.Errorf("error %v, want ErrConflict (for the copy in todo/) unless a dry run", err)
			}
			var got []string
			for _, x := range list {
				got = append(got, x.Was.ID)
				wantErr := !tt.dryRun && x.Was.ID == "conflict"
				if (x.Err != nil) != wantErr {
					t.Errorf("%s: error %v", x.Was.ID, x.Err)
				}
				if x.Was.Attempts != 3 || x.Was.LastError != "exit status 1 (attempt 3)" {
					t.Errorf("%s was reported with %d attempts and last error %q", x.Was.ID, x.Was.Attempts, x.Was.LastError)
				}
				if tt.dryRun || wantErr {
					continue
				}
				if x.Now.State != sessions.Todo || x.Now.Attempts != 0 {
					t.Errorf("%s now in %s with %d attempts, want todo with 0", x.Was.ID, x.Now.State, x.Now.Attempts)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("requeued %v, want %v", got, tt.want)
			}
			left, err := b.ListState(sessions.Failed, true)
			if err != nil {
				t.Fatal(err)
			}
			wantLeft := 4 - len(tt.want) + 1 // the conflict stays
			if tt.dryRun {
				wantLeft = 4
			}
			if len(left) != wantLeft {
				t.Errorf("%d left in failed/, want %d", len(left), wantLeft)
			}
		})
	}
}
