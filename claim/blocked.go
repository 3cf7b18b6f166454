package claim

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pickup-dev/pickup/sessions"
)

// BlockedError is ErrNothingAvailable when sessions are left in todo/ but
// every one waits on dependencies. Next and Wait say how many; Explain
// adds why, which costs a listing, so it is only done when nothing could
// be taken.
type BlockedError struct {
	Blocked int // sessions of todo/ that wait on dependencies not done
	// Why says, for the first few of them, what they wait on: those that
	// wait forever first ("release waits on ghost, which does not exist",
	// "a and b wait on each other (dependency cycle a -> b -> a)").
	Why []string
	// Forever lists, in board order, the sessions of todo/ that next can
	// never take as the board stands (see sessions.Waits.Forever).
	Forever []string

	explained bool
}

func (e *BlockedError) Error() string {
	msg := fmt.Sprintf("%s: %d session(s) in todo wait on unfinished dependencies", ErrNothingAvailable, e.Blocked)
	if len(e.Why) > 0 {
		msg += ": " + strings.Join(e.Why, "; ")
	}
	return msg
}

func (e *BlockedError) Unwrap() error { return ErrNothingAvailable }

// maxWhy is how many sessions (or cycles) an explanation names.
const maxWhy = 4

// Explain fills in the *BlockedError in err, if there is one, with why
// the sessions of todo/ wait, and returns err. Any other error (nil
// included) comes back as it is. It lists todo/, doing/ and failed/, and
// looks up each dependency: Client.Next calls it when it has nothing to
// give, a caller of Wait when it gives up.
func (c *Client) Explain(err error) error {
	var be *BlockedError
	if !errors.As(err, &be) || be.explained {
		return err
	}
	be.explained = true
	var fe *FilterError
	var filter sessions.TagFilter
	if errors.As(err, &fe) {
		filter = fe.Filter // explain only the sessions the caller asked for
	}
	b := c.Board
	var todo, unfinished []sessions.Session
	for _, st := range []sessions.State{sessions.Todo, sessions.Doing, sessions.Failed} {
		list, lerr := b.ListState(st, false)
		if lerr != nil {
			return err // the count stands without the why
		}
		if st == sessions.Todo {
			todo = filter.Keep(slices.Clone(list))
		}
		unfinished = append(unfinished, list...)
	}
	deps := b.Deps(unfinished)
	var forever, waiting []string
	cycles := map[string]bool{}
	for _, s := range todo {
		w := deps.Wait(s)
		if len(w.On) == 0 {
			continue
		}
		if !w.Forever() {
			waiting = append(waiting, fmt.Sprintf("%s waits on %s", s.ID, strings.Join(w.On, ", ")))
			continue
		}
		be.Forever = append(be.Forever, s.ID)
		if len(w.Missing) > 0 {
			verb := "does"
			if len(w.Missing) > 1 {
				verb = "do"
			}
			forever = append(forever, fmt.Sprintf("%s waits on %s, which %s not exist", s.ID, strings.Join(w.Missing, ", "), verb))
		}
		if len(w.Cycle) > 0 && !cycles[w.Cycle[0]] {
			cycles[w.Cycle[0]] = true
			forever = append(forever, cycleWhy(w.Cycle))
		}
	}
	why := append(forever, waiting...)
	if len(why) > maxWhy {
		why = append(why[:maxWhy], fmt.Sprintf("and %d more", len(why)-maxWhy))
	}
	be.Why = why
	return err
}

// cycleWhy says who waits on whom in a cycle: "a and b wait on each other
// (dependency cycle a -> b -> a)".
func cycleWhy(cycle []string) string {
	members := cycle[:len(cycle)-1]
	if len(members) == 1 {
		return fmt.Sprintf("%s waits on itself (dependency cycle %s)", members[0], sessions.CycleText(cycle))
	}
	who := strings.Join(members[:len(members)-1], ", ") + " and " + members[len(members)-1]
	if len(members) > 3 {
		who = fmt.Sprintf("%s and %d others", members[0], len(members)-1)
	}
	return fmt.Sprintf("%s wait on each other (dependency cycle %s)", who, sessions.CycleText(cycle))
}
