package claim

import (
	"context"
	"errors"
	"io/fs"
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
	// A clone lacks empty state directories, and watching must not make
	// them: watch the board's top for them to appear instead.
	missing := map[string]bool{}
	for _, d := range []string{b.StateDir(sessions.Todo, ""), doing, b.StateDir(sessions.Done, "")} {
		err := w.Add(d)
		if errors.Is(err, fs.ErrNotExist) {
			if len(missing) == 0 {
				if err := w.Add(b.Dir); err != nil {
					return err
				}
			}
			missing[d] = true
			continue
		}
		if err != nil {
			return err
		}
	}
	// Sessions reported by the scan of a directory that has just appeared,
	// whose Create event may still come: reported once, not twice.
	scanned := map[string]bool{}
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
			if missing[ev.Name] && ev.Has(fsnotify.Create) {
				delete(missing, ev.Name)
				watchArrived(w, ev.Name, doing, scanned, report)
				continue
			}
			if dir == doing {
				// A new owner directory: watch it too.
				if ev.Has(fsnotify.Create) && sessions.ValidateOwner(name) == nil {
					watchArrived(w, ev.Name, doing, scanned, report)
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
			case ev.Has(fsnotify.Create) && scanned[ev.Name]:
				delete(scanned, ev.Name) // the scan reported it
			case ev.Has(fsnotify.Create):
				report(c)
			case ev.Has(fsnotify.Remove):
				delete(scanned, ev.Name)
				c.Event = "removed"
				report(c)
			}
		}
	}
}

// watchArrived watches a directory that has just appeared (an owner's in
// doing/, or a state directory a clone lacked) and reports the sessions
// already in it: they may have arrived before the watch did (a claim
// renames right after making the directory). For doing/ itself it does the
// same for each owner's directory in it. Each session it reports goes into
// scanned, so that neither its Create event, should it come too, nor a
// second scan of the directory (its own Create event) reports it again.
func watchArrived(w watcher, dir, doing string, scanned map[string]bool, report func(Change)) {
	if info, err := os.Lstat(dir); err != nil || !info.IsDir() {
		return // gone, or a link: never followed
	}
	if err := w.Add(dir); err != nil {
		return
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if dir == doing {
			if e.IsDir() && sessions.ValidateOwner(e.Name()) == nil {
				watchArrived(w, filepath.Join(dir, e.Name()), doing, scanned, report)
			}
			continue
		}
		id, ok := sessions.IsSessionName(e.Name())
		path := filepath.Join(dir, e.Name())
		if !ok || !e.Type().IsRegular() || scanned[path] {
			continue // not a session, or reported by an earlier scan
		}
		c := Change{Time: time.Now().UTC(), ID: id}
		if filepath.Dir(dir) == doing {
			c.State, c.Owner, c.Event = sessions.Doing, filepath.Base(dir), "claimed"
		} else {
			c.State = sessions.State(filepath.Base(dir))
			c.Event = string(c.State)
		}
		scanned[path] = true
		report(c)
	}
}
