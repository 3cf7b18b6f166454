package claim_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fsnotify/fsnotify"
	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// wsFake is a watcher for Watch that delivers only what the test sends it
// (a real inotify queue overflows only under a flood of events).
type wsFake struct {
	*waFake
	added []string // read only after Watch returned
}

func (f *wsFake) Add(dir string) error { f.added = append(f.added, dir); return nil }

// TestWatchLostEvents: when the kernel drops events (its queue overflowed),
// Watch reports a "rescan" change, for the caller to list the board, and
// goes on watching; any other watcher error ends Watch with that error.
//
// The fake's channels are unbuffered and Watch reports from its one
// goroutine, so once a later event has been taken, everything before it has
// been reported: the test needs no timeouts.
func TestWatchLostEvents(t *testing.T) {
	failed := errors.New("read inotify: input/output error")
	for _, tt := range []struct {
		name    string
		deliver error
		want    []string // event and id of each change
		wantErr error    // what Watch returns
	}{
		{name: "event queue overflow", deliver: fsnotify.ErrEventOverflow, want: []string{"rescan ", "todo x"}},
		{name: "watcher error", deliver: failed, wantErr: failed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			fake := &wsFake{waFake: newWAFake()}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			changes := make(chan claim.Change, 16)
			errc := make(chan error, 1)
			go func() { errc <- claim.WatchWith(ctx, b, func(c claim.Change) { changes <- c }, fake) }()

			fake.errors <- tt.deliver
			if tt.wantErr == nil {
				// Still watching: a session arriving in todo/ is reported.
				fake.events <- fsnotify.Event{Name: filepath.Join(b.StateDir(sessions.Todo, ""), "x.md"), Op: fsnotify.Create}
				cancel()
			}
			if err := <-errc; !errors.Is(err, tt.wantErr) {
				t.Fatalf("Watch returned %v, want %v", err, tt.wantErr)
			}
			close(changes)
			var got []string
			for c := range changes {
				if c.Time.IsZero() {
					t.Errorf("change %+v has no time", c)
				}
				got = append(got, c.Event+" "+c.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Watch reported %q, want %q", got, tt.want)
			}
			if want := b.StateDir(sessions.Todo, ""); !slices.Contains(fake.added, want) {
				t.Errorf("Watch watched %q, not %s", fake.added, want)
			}
		})
	}
}
