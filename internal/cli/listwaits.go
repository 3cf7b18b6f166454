package cli

import (
	"encoding/json"
	"os"

	"github.com/pickup-dev/pickup/sessions"
)

// waitingOn returns, by index in list, what each session of todo/ whose
// depends_on are not all done waits on: next skips these sessions, and
// list says why, and whether it is forever (a dependency that does not
// exist, a cycle). all says list holds every state of the board.
//
// A board where nothing waits pays one lookup per dependency, as before:
// the unfinished sessions that a cycle runs through are only gathered when
// some session does wait.
func waitingOn(b *sessions.Board, list []sessions.Session, all bool) (map[int]sessions.Waits, error) {
	var blocked []int
	done := map[string]bool{}
	for i, s := range list {
		if s.State != sessions.Todo {
			continue
		}
		for _, dep := range s.DependsOn {
			d, ok := done[dep]
			if !ok {
				info, err := os.Lstat(b.Path(sessions.Done, "", dep))
				d = err == nil && info.Mode().IsRegular()
				done[dep] = d
			}
			if !d {
				blocked = append(blocked, i)
				break
			}
		}
	}
	if len(blocked) == 0 {
		return nil, nil
	}
	var unfinished []sessions.Session
	if all {
		for _, s := range list {
			if s.State != sessions.Done {
				unfinished = append(unfinished, s)
			}
		}
	} else {
		var err error
		if unfinished, err = b.List(sessions.Todo, sessions.Doing, sessions.Failed); err != nil {
			return nil, err
		}
	}
	deps := b.Deps(unfinished)
	waits := make(map[int]sessions.Waits, len(blocked))
	for _, i := range blocked {
		waits[i] = deps.Wait(list[i])
	}
	return waits, nil
}

// waitsText is what list prints after the title of a session that waits:
// " (waits on build, ghost; ghost does not exist)".
func waitsText(w sessions.Waits) string {
	text := " (waits on "
	for i, dep := range w.On {
		if i > 0 {
			text += ", "
		}
		text += dep
	}
	if why := w.Why(); why != "" {
		text += "; " + why
	}
	return text + ")"
}

// waitsJSON is the keys list --json adds to a session that waits, each
// after a comma: "waits_on", and "waits_on_missing" and "waits_on_cycle"
// when they apply.
func waitsJSON(w sessions.Waits) ([]byte, error) {
	var out []byte
	for _, kv := range []struct {
		key  string
		list []string
	}{{"waits_on", w.On}, {"waits_on_missing", w.Missing}, {"waits_on_cycle", w.Cycle}} {
		if len(kv.list) == 0 {
			continue
		}
		v, err := json.Marshal(kv.list)
		if err != nil {
			return nil, err
		}
		out = append(append(append(out, `,"`...), kv.key+`":`...), v...)
	}
	return out, nil
}
