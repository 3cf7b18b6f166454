package claim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pickup-dev/pickup/sessions"
)

// Change is one session arriving in a state, or a session file removed.
type Change struct {
	Time  time.Time      `json:"time"`
	Event string         `json:"event"` // "todo", "claimed", "done", "failed", "removed", "rescan"
	ID    string         `json:"id,omitempty"`
	State sessions.State `json:"state,omitempty"`
	Owner string         `json:"owner,omitempty"`
}

// Watch reports changes on the board as they happen until ctx is done.
// A move between states is reported once, as the arrival in the new state
// (a claim as "claimed" with its owner). If the kernel's event queue
// overflows, Watch reports a "rescan" change: events were lost, and the
// caller should list the board.
func Watch(ctx context.Context, b *sessions.Board, report func(Change)) error {
	w, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return err
	}
	defer w.Close()
	return watch(ctx, b, report, fsWatcher{w})
}

// watcher is what Watch uses of *fsnotify.Watcher: a notifier that can
// watch more directories (an owner's, once it appears).
type watcher interface {
	notifier
	Add(dir string) error
}

func (f fsWatcher) Add(dir string) error { return f.w.Add(dir) }

// watch is Watch on w, which tests replace with a fake one.
func watch(ctx context.Context, b *sessions.Board, report func(Change), w watcher) error {
	doing := b.StateDir(sessions.Doing, "")
	for _, d := range []string{b.StateDir(sessions.Todo, ""), doing, b.StateDir(sessions.Done, "")} {
		if err := w.Add(d); err != nil {
			return err
		}
	}
	_ = w.Add(b.StateDir(sessions.Failed, "")) // boards made before failed/ existed lack it
	owners, err := b.Owners()
	if err != nil {
		return err
	}
	for _, o := range owners {
		_ = w.Add(b.StateDir(sessions.Doing, o))
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-w.Errors():
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				report(Change{Time: time.Now().UTC(), Event: "rescan"})
				continue
			}
			return err
		case ev := <-w.Events():
			dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
			if dir == doing {
				// A new owner directory: watch it too.
				if ev.Has(fsnotify.Create) && sessions.ValidateOwner(name) == nil {
					if err := w.Add(ev.Name); err == nil {
						// Sessions may have arrived before the watch did (a
						// claim renames right after making the directory):
						// report what is there now.
						entries, _ := os.ReadDir(ev.Name)
						for _, e := range entries {
							if id, ok := sessions.IsSessionName(e.Name()); ok && e.Type().IsRegular() {
								report(Change{Time: time.Now().UTC(), Event: "claimed", ID: id, State: sessions.Doing, Owner: name})
							}
						}
					}
				}
				continue
			}
			id, ok := sessions.IsSessionName(name)
			if !ok {
				continue
			}
			c := Change{Time: time.Now().UTC(), ID: id}
			switch filepath.Dir(dir) {
			case doing:
				c.State, c.Owner, c.Event = sessions.Doing, filepath.Base(dir), "claimed"
			default:
				c.State = sessions.State(filepath.Base(dir))
				c.Event = string(c.State)
			}
			switch {
			case ev.Has(fsnotify.Create):
				report(c)
			case ev.Has(fsnotify.Remove):
				c.Event = "removed"
				report(c)
			}
		}
	}
}
