package sessions

import (
	"fmt"

	"github.com/pickup-dev/pickup/internal/boardhook"
)

// init gives pickup's own packages what they need of a Board beyond its
// public API (see internal/boardhook). It only fills the hooks: nothing
// runs, nothing of the process changes.
func init() {
	boardhook.Install(boardhook.Hooks{
		SetHeard: setHeard, HeardOf: heardOf,
		SetArbiter: setArbiter, ArbiterOf: func(board any) any {
			if a := boardOf(board).arbiterOf(); a != nil {
				return a
			}
			return nil // no typed nil: none
		},
		SetLastHeard: setLastHeard, LastHeardOf: lastHeardOf,
		SetIDSuffix: setIDSuffix, IDSuffixOf: func(board any) string { return boardOf(board).idSuffixOf() },
		AppendEventUnsynced: func(board any, event any) error {
			e, ok := event.(Event)
			if !ok {
				panic(fmt.Sprintf("boardhook: an event is a sessions.Event, not a %T", event))
			}
			return boardOf(board).appendEventUnsynced(e)
		},
		EnterMoveOf: func(board any, id string) (func(), error) { return boardOf(board).enterMoveOf(id) },
		WriteEvents: func(log any, events any) func() error {
			l, ok := log.(*EventLog)
			if !ok {
				panic(fmt.Sprintf("boardhook: a log is a *sessions.EventLog, not a %T", log))
			}
			es, ok := events.([]Event)
			if !ok {
				panic(fmt.Sprintf("boardhook: events are a []sessions.Event, not a %T", events))
			}
			return l.writeEvents(es, true)
		},
	})
}

func boardOf(board any) *Board {
	b, ok := board.(*Board)
	if !ok {
		panic(fmt.Sprintf("boardhook: %T is not *sessions.Board", board))
	}
	return b
}

func setHeard(board any, heard boardhook.Heard) {
	b := boardOf(board)
	b.hooksMu.Lock()
	defer b.hooksMu.Unlock()
	b.heard = heard
}

func heardOf(board any) boardhook.Heard {
	b := boardOf(board)
	b.hooksMu.Lock()
	defer b.hooksMu.Unlock()
	return b.heard
}

// setArbiter takes a func(Event) error, or nil for none.
func setArbiter(board any, arbiter any) {
	b := boardOf(board)
	var f func(e Event) error
	if arbiter != nil {
		var ok bool
		if f, ok = arbiter.(func(e Event) error); !ok {
			panic(fmt.Sprintf("boardhook: an arbiter is a func(sessions.Event) error, not a %T", arbiter))
		}
	}
	b.hooksMu.Lock()
	defer b.hooksMu.Unlock()
	b.arbiter = f
}

// arbiterOf is b's arbiter, nil if none.
func (b *Board) arbiterOf() func(e Event) error {
	b.hooksMu.Lock()
	defer b.hooksMu.Unlock()
	return b.arbiter
}

func setLastHeard(board any, lastHeard boardhook.LastHeard) {
	b := boardOf(board)
	b.hooksMu.Lock()
	defer b.hooksMu.Unlock()
	b.lastHeard = lastHeard
}

func lastHeardOf(board any) boardhook.LastHeard {
	b := boardOf(board)
	b.hooksMu.Lock()
	defer b.hooksMu.Unlock()
	return b.lastHeard
}

func setIDSuffix(board any, suffix string) {
	b := boardOf(board)
	b.hooksMu.Lock()
	defer b.hooksMu.Unlock()
	b.idSuffix = suffix
}

// idSuffixOf is the suffix of the ids b's Create makes, "" if none.
func (b *Board) idSuffixOf() string {
	b.hooksMu.Lock()
	defer b.hooksMu.Unlock()
	return b.idSuffix
}
