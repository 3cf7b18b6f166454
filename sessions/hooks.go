package sessions

import (
	"fmt"

	"github.com/pickup-dev/pickup/internal/boardhook"
)

// init gives pickup's own packages what they need of a Board beyond its
// public API (see internal/boardhook). It only fills the hooks: nothing
// runs, nothing of the process changes.
func init() {
	boardhook.Install(boardhook.Hooks{SetHeard: setHeard, HeardOf: heardOf})
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
	b.heardMu.Lock()
	defer b.heardMu.Unlock()
	b.heard = heard
}

func heardOf(board any) boardhook.Heard {
	b := boardOf(board)
	b.heardMu.Lock()
	defer b.heardMu.Unlock()
	return b.heard
}
