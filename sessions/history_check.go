package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/pickup-dev/pickup/internal/fsx"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// historySettle is how long ago a session must have moved before doctor
// calls its move unrecorded: a transition writes its line after the
// rename and two fsyncs, so a younger mismatch may be a line on its way.
const historySettle = 2 * time.Second

// settleRounds bounds how often doctor waits for moving sessions to settle.
const settleRounds = 3

// gap is a session whose history does not end where it is.
type gap struct {
	id       string
	place    Place
	last     string    // where its history ends
	lastTime time.Time // the time of that event
}

// checkHistory compares the event log with the board (places: where each
// session is): a line that is not an event, or a session whose history
// ends somewhere else than where it is (a process killed, or a disk full,
// between a move and its line), is a finding. With repair, a torn line is
// blanked out in place and every missed move gets a doctor line. Sessions
// with no history at all (placed by hand or by git) are not compared:
// nothing says where they were. settle is historySettle; tests pass less.
func (b *Board) checkHistory(places map[string]Place, repair bool, settle time.Duration) ([]Finding, error) {
	data, info, err := b.readLog()
	if err != nil {
		return nil, err
	}
	events, bad, err := ReadEvents(bytes.NewReader(data), "")
	if err != nil {
		return nil, err
	}
	out := b.badLineFindings(data, info, bad, repair, settle)
	gaps := findGaps(places, events)
	for round := 0; round < settleRounds && len(gaps) > 0; round++ {
		wait, again := unsettled(gaps, settle)
		if !again {
			break
		}
		time.Sleep(wait)
		if gaps, err = b.recheck(gaps); err != nil {
			return nil, err
		}
	}
	return append(out, b.gapFindings(gaps, repair)...), nil
}

// readLog reads the whole event log (nothing if there is none).
func (b *Board) readLog() ([]byte, fs.FileInfo, error) {
	// Never through a link or from a pipe: doctor reports those (see
	// linkFindings), and a history read through one is not this board's.
	data, err := fsx.ReadRegular(b.EventLogPath())
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fsx.ErrUnsafe) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read event log: %w", err)
	}
	info, err := os.Stat(b.EventLogPath())
	if err != nil {
		return nil, nil, fmt.Errorf("read event log: %w", err)
	}
	return data, info, nil
}

// findGaps returns the sessions whose history, in time order as pickup log
// shows it, ends somewhere else than where they are.
func findGaps(places map[string]Place, events []Event) []gap {
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time.Before(events[j].Time) })
	arrivals := map[string][]Event{}
	for _, e := range events {
		// Moves of a discarded copy (to conflicts/, removed) say nothing
		// about where the session is, except that it was not there: the
		// arrivals there so far (a claim that lost to an earlier one) no
		// longer count.
		switch {
		case isStatePlace(e.To):
			arrivals[e.ID] = append(arrivals[e.ID], e)
		case e.Op == "doctor" && isStatePlace(e.From):
			kept := arrivals[e.ID][:0]
			for _, a := range arrivals[e.ID] {
				if a.To != e.From {
					kept = append(kept, a)
				}
			}
			arrivals[e.ID] = kept
		}
	}
	var gaps []gap
	for id, p := range places {
		list := arrivals[id]
		if len(list) == 0 {
			continue
		}
		e := list[len(list)-1]
		if e.To != placeName(p) {
			gaps = append(gaps, gap{id: id, place: p, last: e.To, lastTime: e.Time})
		}
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].id < gaps[j].id })
	return gaps
}

// isStatePlace reports whether an event's destination is a session's
// place: todo, done, failed or doing/<owner>.
func isStatePlace(to string) bool {
	switch State(to) {
	case Todo, Done, Failed:
		return true
	}
	owner, ok := strings.CutPrefix(to, string(Doing)+"/")
	return ok && ValidateOwner(owner) == nil
}

// placePath is the path of session id at the place the event log calls
// name (one that isStatePlace accepts).
func (b *Board) placePath(name, id string) string {
	st, owner, _ := strings.Cut(name, "/")
	return b.Path(State(st), owner, id)
}

// placeName is how the event log names a place.
func placeName(p Place) string {
	if p.State == Doing {
		return string(Doing) + "/" + p.Owner
	}
	return string(p.State)
}

// unsettled says whether some gap may be a move whose line is on its way
// (moved less than settle ago, or moved again since the board was read),
// and how long to wait for it.
func unsettled(gaps []gap, settle time.Duration) (time.Duration, bool) {
	var wait time.Duration
	again := false
	for _, g := range gaps {
		info, err := os.Lstat(g.place.Path)
		if err != nil {
			again = true // it moved on: look again
			continue
		}
		if age := time.Since(changeTime(info)); age < settle {
			again = true
			wait = max(wait, settle-age)
		}
	}
	return wait, again
}

// recheck looks again at where the sessions of gaps are and what the
// (re-read) log says, and returns the gaps that remain.
func (b *Board) recheck(gaps []gap) ([]gap, error) {
	events, _, err := b.Events("")
	if err != nil {
		return nil, fmt.Errorf("read event log: %w", err)
	}
	places := map[string]Place{}
	for _, g := range gaps {
		ps, err := b.Locate(g.id)
		if err != nil {
			return nil, err
		}
		if len(ps) == 1 {
			places[g.id] = ps[0]
		}
	}
	return findGaps(places, events), nil
}

// gapFindings reports the gaps and, with repair, appends a doctor line
// for each, so that the history ends where the session is.
func (b *Board) gapFindings(gaps []gap, repair bool) []Finding {
	out := make([]Finding, len(gaps))
	events := make([]Event, len(gaps))
	now := b.now()
	for i, g := range gaps {
		here := placeName(g.place)
		out[i] = Finding{Kind: "history", ID: g.id, Path: g.place.Path,
			Message: fmt.Sprintf("history ends in %s but the session is in %s: a move was not recorded (a crash or a full disk between the move and its line in %s)", g.last, here, EventLogFile)}
		t := now
		if !t.After(g.lastTime) {
			// A clock behind the last line's (another machine's): the
			// doctor line must still come last in time order.
			t = g.lastTime.Add(time.Millisecond)
		}
		// Src and Dst, for commit mode: the missed move's commit never
		// happened either, so this one takes both paths.
		events[i] = Event{Time: t, Op: "doctor", ID: g.id, From: g.last, To: here, Src: b.placePath(g.last, g.id), Dst: g.place.Path,
			Reason: "move missing from the history (a crash or a full disk between the move and its line)"}
	}
	if !repair || len(gaps) == 0 {
		return out
	}
	l := b.OpenEventLog()
	defer l.Close()
	if err := l.Record(events...); err != nil {
		for i := range out {
			out[i].Message += fmt.Sprintf(" (recording it failed: %v)", err)
		}
		return out
	}
	for i, g := range gaps {
		out[i].Fix = fmt.Sprintf("recorded the move from %s to %s in %s", g.last, placeName(g.place), EventLogFile)
	}
	return out
}

// badLineFindings reports the lines of the log that are not events, and a
// last line cut short (no newline, older than settle: not an append in
// progress). With repair, a torn line (the start of an event, cut short
// by a crash or a full disk) is blanked out in place; a line that is not
// pickup's (edited by hand) is only reported.
func (b *Board) badLineFindings(data []byte, info fs.FileInfo, bad []BadLine, repair bool, settle time.Duration) []Finding {
	if tail := bytes.LastIndexByte(data, '\n') + 1; tail < len(data) && time.Since(info.ModTime()) >= settle {
		text := data[tail:]
		if _, ok := parseEvent(text, "", nil); !ok && len(bytes.TrimSpace(text)) > 0 {
			line := bytes.Count(data, []byte("\n")) + 1
			bad = append(bad, BadLine{Line: line, Text: truncateUTF8(string(text), 80), off: int64(tail), n: len(text)})
		}
	}
	var out []Finding
	for _, l := range bad {
		f := Finding{Kind: "eventlog", Path: b.EventLogPath(), Line: l.Line}
		frag := data[l.off : l.off+int64(l.n)]
		if !isTorn(frag) {
			f.Message = fmt.Sprintf("not an event (edited by hand?); pickup log skips it: %q; correct or remove the line", l.Text)
			out = append(out, f)
			continue
		}
		f.Message = fmt.Sprintf("line torn part-way (a write cut short by a crash or a full disk): %q", l.Text)
		if repair {
			if err := b.eraseLogBytes(l.off, frag); err != nil {
				f.Message += fmt.Sprintf(" (erasing it failed: %v)", err)
			} else {
				f.Fix = "erased the fragment in place (the move it was recording is restored from where the session is)"
			}
		}
		out = append(out, f)
	}
	return out
}

// isTorn reports whether b is the start of a line that pickup wrote and a
// crash or a full disk cut short, rather than a line edited by hand.
func isTorn(b []byte) bool {
	return bytes.HasPrefix(b, eventStart) && !json.Valid(b)
}

// eraseLogBytes overwrites frag, found at off in the log, with spaces (a
// last one without its newline gets one): the line becomes blank, or the
// event glued after it stands alone. It first checks that the bytes are
// still there (the log may have been replaced since it was read). Appends
// of other processes go on meanwhile: they only add at the end.
func (b *Board) eraseLogBytes(off int64, frag []byte) error {
	f, err := os.OpenFile(b.EventLogPath(), os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	cur := make([]byte, len(frag)+1)
	n, _ := f.ReadAt(cur, off)
	if n < len(frag) || !bytes.Equal(cur[:len(frag)], frag) {
		return errors.New("the log changed since it was read; run doctor again")
	}
	spaces := bytes.Repeat([]byte{' '}, len(frag))
	if n == len(frag) {
		spaces = blank(len(frag)) // the end of the log: make the line whole
	}
	if _, err := f.WriteAt(spaces, off); err != nil {
		return err
	}
	if b.NoSync {
		return nil
	}
	return f.Sync()
}

// currentPlaces returns where each session found by Check's scan is
// (copies), for the history check: a session in several places only once
// repair has resolved it (found again), else it is left out, reported as
// a duplicate.
func (b *Board) currentPlaces(copies map[string][]copyOf, repair bool) (map[string]Place, error) {
	places := make(map[string]Place, len(copies))
	for id, cs := range copies {
		switch {
		case len(cs) == 1:
			places[id] = cs[0].place
		case repair:
			ps, err := b.Locate(id)
			if err != nil {
				return nil, err
			}
			if len(ps) == 1 {
				places[id] = ps[0]
			}
		}
	}
	return places, nil
}
