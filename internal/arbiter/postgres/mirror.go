package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sys/unix"
)

// lock takes the board's mirror lock: the processes of this board update
// the view and the files that Refresh writes one at a time.
func (s *Board) lock() (func(), error) {
	if err := os.MkdirAll(s.B.RuntimeDir(), 0o755); err != nil {
		return nil, err
	}
	fd, err := unix.Open(filepath.Join(s.B.RuntimeDir(), "pg.lock"), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("postgres board: lock: %w", err)
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("postgres board: lock: %w", err)
	}
	return func() { unix.Close(fd) }, nil
}

// see records that this board shows session id at place, as of version.
func (s *Board) see(id, place string, version, fence int64) {
	unlock, err := s.lock()
	if err != nil {
		return
	}
	defer unlock()
	v := s.loadView()
	if v.row(id).Version < version {
		v.set(id, seen{Place: place, Version: version, Fence: fence})
		_ = s.saveView(v)
	}
}

// fenceSeen is the fencing token this board last saw for id.
func (s *Board) fenceSeen(id string) int64 {
	unlock, err := s.lock()
	if err != nil {
		return 0
	}
	defer unlock()
	return s.loadView().row(id).Fence
}

// Refresh brings the board directory in line with the database: every
// session that the database has at a newer version than this directory
// shows is moved (or written) where the database has it, if its file is
// still where this directory last showed it. One that a local transition
// has moved since is left to that transition, whose arbiter decides. It
// reports whether anything changed. first: a board that joins; copies of
// a session elsewhere than the database has it are removed.
func (s *Board) Refresh(ctx context.Context) (bool, error) {
	return s.refresh(false)
}

func (s *Board) refresh(first bool) (bool, error) {
	var res Response
	s.mu.Lock()
	opened := s.opened
	s.opened = nil
	s.mu.Unlock()
	if opened != nil && !first { // a board that joins reads every row
		res = *opened // read a moment ago, when the board was opened
	} else {
		var err error
		if res, err = s.call("read the board", s.stateRequest(s.readRequest("state", first))); err != nil {
			return false, err
		}
		s.sawHistoryDue(res)
	}
	unlock, err := s.lock()
	if err != nil {
		return false, err
	}
	defer unlock()
	s.hear(res.Beats)
	s.mu.Lock()
	s.hearHolders(res.Holders) // holders.go
	s.mu.Unlock()
	view := s.loadView()
	// The new horizon: the state's, held back to the oldest row that
	// is left to a local transition (shown here at an older version), so
	// that the next Refresh reads it again.
	through := res.Through
	hold := func(r Row) { through = min(through, r.Txid) }
	var need []Row
	from := map[string]string{}
	dirty := false
	ids := make([]string, len(res.Rows))
	for i, r := range res.Rows {
		ids[i] = r.ID
	}
	view.prefetch(ids)
	for _, r := range res.Rows {
		v, known := view.get(r.ID)
		if r.Version <= v.Version {
			continue
		}
		s.fenceMoved(v, r)
		want := s.rowPath(r)
		cur := ""
		if known {
			cur = s.placePath(v.Place, r.ID)
		}
		switch {
		case cur == want || (!known && exists(want) && !first):
			view.set(r.ID, seen{Place: place(r.State, r.Owner), Version: r.Version, Fence: r.Fence})
			dirty = true
		case known && !exists(cur):
			if exists(want) {
				view.set(r.ID, seen{Place: place(r.State, r.Owner), Version: r.Version, Fence: r.Fence})
				dirty = true
			} else {
				hold(r) // a local transition moved it: its arbiter decides
			}
		default:
			need = append(need, r)
			from[r.ID] = cur
		}
	}
	changed := dirty || len(need) > 0
	var missing []string
	for _, r := range need {
		if r.Body == nil {
			missing = append(missing, r.ID)
		}
	}
	if len(missing) > 0 {
		// A state read whole comes without content: read the content
		// of the sessions to write here.
		bodies, err := s.call("read the board", Request{Op: "bodies", IDs: missing})
		if err != nil {
			if dirty {
				return true, errors.Join(err, s.saveView(view))
			}
			return false, err
		}
		content := map[string]Row{}
		for _, r := range bodies.Rows {
			content[r.ID] = r
		}
		kept := need[:0]
		for _, r := range need {
			if r.Body == nil {
				b, ok := content[r.ID]
				if !ok {
					continue // gone from the database meanwhile
				}
				r = b
			}
			kept = append(kept, r)
		}
		need = kept
	}
	for _, r := range need {
		if first {
			s.removeCopies(r)
		}
		placed, err := s.placeRowIn(view, r, from[r.ID], from[r.ID] != "")
		if err != nil {
			return true, errors.Join(err, s.saveView(view))
		}
		if !placed {
			hold(r)
		}
	}
	if res.Through > 0 && through > view.Through {
		view.Through = through
		dirty = true
	}
	if dirty || len(need) > 0 {
		if err := s.saveView(view); err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// readRequest asks for the sessions written since this board's last
// Refresh, with their content (op "state", or "open" with the state); a
// board that joins (first) reads every session. The horizon is read
// without the lock: one older than the view has when the answer is
// applied only makes the answer longer.
func (s *Board) readRequest(op string, first bool) Request {
	req := Request{Op: op, Bodies: true, Host: s.Host}
	if op == "open" {
		req.URL, req.State = s.url, true
	}
	if !first {
		req.Horizon = s.viewThrough()
	}
	return req
}

// removeCopies removes the files of session r other than where the
// database has it (a board that joins, with copies of its own).
func (s *Board) removeCopies(r Row) {
	places, err := s.B.Locate(r.ID)
	if err != nil {
		return
	}
	want := s.rowPath(r)
	for _, p := range places {
		if p.Path != want {
			_ = os.Remove(p.Path)
		}
	}
}

// fenceMoved records a session that this board showed in an owner's
// hands and that someone else has moved since (a reap, a release on
// another machine): that owner's later done or release of it exits with
// claim.ErrClaimLost, as after a local reap.
func (s *Board) fenceMoved(v seen, r Row) {
	st, owner, ok := parsePlace(v.Place)
	// A reap's event names the owner it reaped, not who reaped.
	byOwner := r.LastBy == owner && r.LastOp != "reap"
	if !ok || st != string(sessions.Doing) || owner == "" || byOwner || (r.State == st && r.Owner == owner) {
		return
	}
	if s.Leases == nil {
		return
	}
	reason := fmt.Sprintf("%s by %s in the database %s; fencing token now %d", r.LastOp, r.LastBy, s.URL, r.Fence)
	if r.LastBy == "" || r.LastOp == "reap" {
		reason = fmt.Sprintf("%s in the database %s; fencing token now %d", r.LastOp, s.URL, r.Fence)
	}
	_ = s.Leases.FenceStale(owner, r.ID, reason)
}

// Beat records owner's heartbeat in the database (the server's clock), so
// that other machines do not reap it while it works, and renews the named
// locks it holds (one statement).
func (s *Board) Beat(owner string) error {
	if err := sessions.ValidateOwner(owner); err != nil {
		return err
	}
	if _, err := s.call("heartbeat "+owner, Request{Op: "beat", Owner: owner, Host: s.Host, Board: boardhook.IDSuffixOf(s.B), Holders: s.leaseHolders(owner)}); err != nil {
		return err
	}
	markBeat(s.B.Dir, owner)
	return nil
}

// hear records the owners' heartbeats that a Refresh read (the lock
// must be held): on this machine's clock, each is now less its age on the
// server's clock, so that neither clock's offset counts. They are also
// kept in .pickup/pg-heard for the processes that judge owners without a
// Refresh of their own, each owner's newest.
//
// An owner on another machine, whose processes cannot be checked from
// here, is then judged stale only `stale` after its last heartbeat
// anywhere (boardhook.SetLastHeard), with nothing written for it here:
// an owner's heartbeat moves at each of its transitions, and renewing a
// lease file of each such owner at every command cost a fifth of a
// command's time in a 16-agent drain.
func (s *Board) hear(beats []Beat) {
	now := time.Now()
	if s.B.Now != nil {
		now = s.B.Now()
	}
	heard := make(map[string]time.Time, len(beats))
	for _, b := range beats {
		heard[b.Owner] = now.Add(-time.Duration(b.AgeMS) * time.Millisecond)
	}
	s.mu.Lock()
	s.beats, s.heard = beats, heard
	s.mu.Unlock()
	if len(beats) == 0 {
		return
	}
	kept := s.readHeard()
	changed := false
	for owner, at := range heard {
		// A second is the file's grain: the stale periods are minutes.
		if at.Sub(kept[owner]) >= time.Second {
			kept[owner], changed = at, true
		}
	}
	if !changed {
		return
	}
	data := make([]byte, 0, 32*len(kept)+len(heardHeader))
	data = append(data, heardHeader...)
	for owner, at := range kept {
		if sessions.ValidateOwner(owner) != nil {
			continue
		}
		data = append(data, owner...)
		data = append(data, ' ')
		data = strconv.AppendInt(data, at.UnixMilli(), 10)
		data = append(data, '\n')
	}
	path := s.heardPath()
	tmp := path + "." + strconv.Itoa(os.Getpid())
	if os.WriteFile(tmp, data, 0o644) == nil {
		_ = os.Rename(tmp, path)
	}
}

// heardHeader begins .pickup/pg-heard; a line per owner follows: the
// owner and when it last heartbeat, in Unix milliseconds of this
// machine's clock.
const heardHeader = "pickup-pg-heard 1\n"

func (s *Board) heardPath() string { return filepath.Join(s.B.RuntimeDir(), "pg-heard") }

// readHeard reads .pickup/pg-heard (empty if there is none or it is not
// of this format).
func (s *Board) readHeard() map[string]time.Time {
	kept := map[string]time.Time{}
	data, err := fsx.ReadRegular(s.heardPath())
	if err != nil {
		return kept
	}
	rest, ok := bytes.CutPrefix(data, []byte(heardHeader))
	if !ok {
		return kept
	}
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		owner, ms, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(string(ms), 10, 64); err == nil {
			kept[string(owner)] = time.UnixMilli(n)
		}
	}
	return kept
}

// LastHeard is when owner last heartbeat in the database, on this
// machine's clock (boardhook.SetLastHeard): as this process's last
// Refresh read it, else as .pickup/pg-heard keeps it.
func (s *Board) LastHeard(owner string) (time.Time, bool) {
	s.mu.Lock()
	heard := s.heard
	s.mu.Unlock()
	if heard == nil {
		heard = s.readHeard()
	}
	at, ok := heard[owner]
	return at, ok
}
