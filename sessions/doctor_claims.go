package sessions

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Which copy of a session found in several places doctor keeps: the event
// log says. Its lines are replayed in time order as one chain of moves; a
// move whose origin the chain had already left (a claim from todo/ made on
// a clone, branch or rebase window that had not seen an earlier claim) is
// made from a stale view of the board, and so is every later move of that
// copy. Where the chain ends is where the session is; the claim that came
// first wins.

// CheckOptions say what Check may do.
type CheckOptions struct {
	// Repair mends what can be mended without losing anything.
	Repair bool
	// Fence, if set, is called before Repair discards an owner's copy of
	// a session in doing/ (its claim lost to an earlier one, or the
	// session is finished): it must record that the owner lost its claim,
	// so that the owner's done or release of it fails (claim.Leases.Fence).
	// If it fails, the copy stays.
	Fence func(owner, id, reason string) error
}

// placeStatus is what the history says about one place of a session.
type placeStatus int

const (
	placeUnknown placeStatus = iota // the history never names it
	placeCurrent                    // the chain ends here
	placeLeft                       // the chain passed here and moved on
	placeStale                      // reached only by moves from a stale view
)

// claimHistory is what the event log says about one session.
type claimHistory struct {
	known   bool // some line places the session
	current string
	status  map[string]placeStatus
	arrived map[string]Event // the last move into each place, stale or not
}

func (h claimHistory) of(p Place) placeStatus {
	if h.status == nil {
		return placeUnknown
	}
	return h.status[placeName(p)]
}

// replayHistory replays one session's events (in time order).
func replayHistory(events []Event) claimHistory {
	h := claimHistory{status: map[string]placeStatus{}, arrived: map[string]Event{}}
	for _, e := range events {
		if !isStatePlace(e.To) {
			continue // a discarded copy: not a place of the session
		}
		h.arrived[e.To] = e
		from := e.From
		switch {
		case !h.known, from == h.current:
		case from == "" || h.status[from] == placeStale || h.status[from] == placeLeft:
			// A second "new", or a move from a place the session had left,
			// or from where only stale moves took it: a stale view.
			if h.status[e.To] != placeCurrent {
				h.status[e.To] = placeStale
			}
			continue
		default:
			// From a place the history never had it at: a line went
			// missing (a crash). The move stands.
		}
		if h.known && h.current != e.To {
			h.status[h.current] = placeLeft
		}
		h.known, h.current = true, e.To
		h.status[e.To] = placeCurrent
	}
	return h
}

// sessionHistories reads the event log once, for duplicates: each
// session's state moves, in time order.
func (b *Board) sessionHistories() map[string][]Event {
	data, _, err := b.readLog()
	if err != nil || len(data) == 0 {
		return nil
	}
	events, _, err := ReadEvents(bytes.NewReader(data), "")
	if err != nil {
		return nil
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time.Before(events[j].Time) })
	out := map[string][]Event{}
	for _, e := range events {
		out[e.ID] = append(out[e.ID], e)
	}
	return out
}

// keepDecision is which copy of a duplicated session doctor keeps, and why.
type keepDecision struct {
	keep int    // index of the copy kept; -1: none (undecided)
	why  string // for the findings and the event log
}

// decideKeep chooses among cs, the copies of one session (not one file
// under several names: see resolveDuplicate):
//
//  1. a copy in done/ (else failed/) whose place the history does not
//     say the session left (reopened since): finished work stays
//     finished, and a claim on it is fenced;
//  2. else the copy where the history's chain ends, provided every claim
//     it discards is one the history calls stale or left;
//  3. else, with two claims or more, none: nothing moves (conservative);
//  4. else the most advanced copy (doing over todo).
func decideKeep(cs []copyOf, h claimHistory) keepDecision {
	best := -1
	for i, c := range cs {
		if (c.place.State == Done || c.place.State == Failed) && h.of(c.place) != placeLeft &&
			(best < 0 || rank(c.place.State) > rank(cs[best].place.State)) {
			best = i
		}
	}
	if best >= 0 {
		return keepDecision{keep: best, why: fmt.Sprintf("the session is finished (%s), and finished work is kept", placeName(cs[best].place))}
	}
	claims := 0
	for _, c := range cs {
		if c.place.State == Doing {
			claims++
		}
	}
	if h.known {
		for i, c := range cs {
			if placeName(c.place) != h.current {
				continue
			}
			ok := true
			for j, d := range cs {
				if j != i && d.place.State == Doing && h.of(d.place) != placeStale && h.of(d.place) != placeLeft {
					ok = false
				}
			}
			if ok {
				return keepDecision{keep: i, why: historyWhy(cs, i, h)}
			}
		}
	}
	if claims >= 2 {
		why := fmt.Sprintf("%s does not say which claim came first", EventLogFile)
		if h.known {
			why = fmt.Sprintf("%s ends in %s, which holds no copy, so it does not say which claim came first", EventLogFile, h.current)
		}
		return keepDecision{keep: -1, why: why}
	}
	keep := 0
	for i, c := range cs {
		if rank(c.place.State) > rank(cs[keep].place.State) {
			keep = i
		}
	}
	return keepDecision{keep: keep, why: fmt.Sprintf("no history decides; kept the most advanced copy (%s)", placeName(cs[keep].place))}
}

// historyWhy says why the history keeps copy i.
func historyWhy(cs []copyOf, i int, h claimHistory) string {
	kept := placeName(cs[i].place)
	at := func(place string) string {
		if e, ok := h.arrived[place]; ok {
			return e.Time.UTC().Format(time.RFC3339)
		}
		return "?"
	}
	var others []string
	for j, c := range cs {
		if j == i {
			continue
		}
		name := placeName(c.place)
		switch h.of(c.place) {
		case placeStale:
			others = append(others, fmt.Sprintf("%s came at %s from a copy of the board that had not seen it", name, at(name)))
		case placeLeft:
			others = append(others, fmt.Sprintf("the session left %s before", name))
		}
	}
	s := fmt.Sprintf("%s says the session is in %s (since %s)", EventLogFile, kept, at(kept))
	if len(others) > 0 {
		s += "; " + strings.Join(others, "; ")
	}
	return s
}
