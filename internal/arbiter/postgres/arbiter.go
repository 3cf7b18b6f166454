package postgres

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
)

// LostError: the database has the session elsewhere than the transition
// found it here; someone else moved it first. It matches
// claim.ErrSessionNotAvailable (claim.ErrClaimLost for this owner's done
// or release, claim.ErrConflict for a new session whose id exists,
// claim.ErrSessionNotFound for one the database does not have).
type LostError struct {
	URL   string
	Where string // where the database has it ("" nowhere)
	// Fence is the session's fencing token in the database; Mine the one
	// this board last saw for it (a reaped owner's late done: Mine <
	// Fence).
	Fence, Mine int64
	kind        error
}

func (e *LostError) Error() string {
	where := "does not have it (run `pickup sync` to import a session made by hand)"
	if e.Where != "" {
		where = "has it in " + e.Where
	}
	msg := fmt.Sprintf("%v: the database (%s) %s", e.kind, e.URL, where)
	if errors.Is(e.kind, arbiter.ErrClaimLost) && e.Fence > 0 {
		msg += fmt.Sprintf(" (fencing token %d; this claim's was %d)", e.Fence, e.Mine)
	}
	return msg
}

func (e *LostError) Unwrap() error { return e.kind }

// parsePlace splits a place as events name it ("todo", "doing/alice",
// "done", "failed"; "" for none) into state and owner.
func parsePlace(p string) (state, owner string, ok bool) {
	switch {
	case p == "":
		return "", "", true
	case p == "todo" || p == "done" || p == "failed":
		return p, "", true
	}
	if o, found := strings.CutPrefix(p, "doing/"); found && sessions.ValidateOwner(o) == nil {
		return "doing", o, true
	}
	return "", "", false
}

func newTx() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Arbiter is the board's arbiter: it makes the transition e, which has
// just happened in the board directory, one transaction in the database,
// and reports whether it stands. A transition the database refuses, or
// could not take, is undone here and recorded nowhere.
func (s *Board) Arbiter(e sessions.Event) error {
	fromState, fromOwner, ok1 := parsePlace(e.From)
	toState, toOwner, ok2 := parsePlace(e.To)
	if !ok1 || !ok2 || toState == "" {
		// A move out of the board's states (doctor setting a copy
		// aside in conflicts/): the database keeps its row as it is.
		return s.record(e)
	}
	body, err := fsx.ReadRegular(e.Dst)
	if err != nil {
		return &arbiter.Refusal{Op: e.Op, ID: e.ID, From: e.Src, To: e.Dst, Err: fmt.Errorf("postgres board: read %s: %w", e.Dst, err)}
	}
	m := &Move{ID: e.ID, Op: e.Op, FromState: fromState, FromOwner: fromOwner, ToState: toState, ToOwner: toOwner,
		Owner: e.Owner, Host: s.Host, Reason: e.Reason, Body: body, Tx: newTx(), Board: boardhook.IDSuffixOf(s.B)}
	if e.Op != "reap" {
		m.Holders = s.leaseHolders(e.Owner) // holders.go
	}
	res, err := s.call(e.Op+" "+e.ID, Request{Op: "move", Move: m})
	if err != nil {
		if uerr := s.undo(e); uerr != nil {
			return errors.Join(err, uerr)
		}
		return err
	}
	if res.Lost {
		return s.lost(e, res)
	}
	if res.Row != nil {
		s.see(e.ID, e.To, res.Row.Version, res.Row.Fence)
	}
	return s.record(e)
}

// record keeps the local event log, as a board without an arbiter does.
func (s *Board) record(e sessions.Event) error {
	err := s.B.AppendEvent(e)
	if s.B.OnEvent != nil {
		s.B.OnEvent(e, err)
	}
	return nil // the transition stands whatever became of the log line
}

// undo moves a transition that the database did not take back where it
// was (a new session's file is removed). A rewrite of a session's content
// in place (Src == Dst: a priority change) has no old place: its writer,
// which holds the old content, puts it back (claim.Client.SetPriority).
func (s *Board) undo(e sessions.Event) error {
	if e.Src != "" && e.Src == e.Dst {
		return nil
	}
	if e.Src == "" {
		if err := os.Remove(e.Dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("postgres board: could not undo %s %s: %w", e.Op, e.ID, err)
		}
		return nil
	}
	if err := fsx.RenameNoReplace(e.Dst, e.Src); err != nil {
		return fmt.Errorf("postgres board: could not undo %s %s (it is in %s here): %w", e.Op, e.ID, e.Dst, err)
	}
	return nil
}

// lost puts the session where the database has it and returns the
// transition's error.
func (s *Board) lost(e sessions.Event, res Response) error {
	le := &LostError{URL: s.URL, kind: arbiter.ErrSessionNotAvailable}
	ce := &arbiter.Refusal{Op: e.Op, ID: e.ID, From: e.Src, To: e.Dst, Err: le, Lost: true}
	switch {
	case e.Src == "":
		le.kind = arbiter.ErrConflict
	case (e.Op == "done" || e.Op == "release") && e.Owner != "":
		le.kind = arbiter.ErrClaimLost
	case !res.Found:
		le.kind = arbiter.ErrSessionNotFound
	}
	if !res.Found || res.Row == nil {
		// The database does not have it: keep the file where it was
		// (a session made by hand, which sync imports).
		if err := s.undo(e); err != nil {
			return errors.Join(ce, err)
		}
		return ce
	}
	r := res.Row
	le.Where = place(r.State, r.Owner)
	le.Fence = r.Fence
	le.Mine = s.fenceSeen(e.ID)
	ce.State = sessions.State(r.State)
	ce.Holder = r.Owner
	unlock, err := s.lock()
	if err != nil {
		return errors.Join(ce, err)
	}
	defer unlock()
	if v := s.loadView().row(e.ID); v.Version > r.Version {
		// A Refresh of another process here has seen a newer row than
		// this answer (the session moved on meanwhile): place the
		// session by the database's row now, not by this old one.
		if cur, err := s.currentRow(e.ID); err == nil && cur.Version >= v.Version {
			r = cur
		}
	}
	if err := s.placeRow(*r, e.Dst, false); err != nil {
		return errors.Join(ce, err)
	}
	return ce
}

// place is a session's place as events name it.
func place(state, owner string) string {
	if state == "doing" && owner != "" {
		return "doing/" + owner
	}
	return state
}

// rowPath is the file of row r on this board.
func (s *Board) rowPath(r Row) string {
	return s.B.Path(sessions.State(r.State), r.Owner, r.ID)
}

// currentRow reads session id's row, with its content, from the database.
func (s *Board) currentRow(id string) (*Row, error) {
	if s.channel() == nil {
		return nil, errors.New("postgres board: not connected")
	}
	res, err := s.call("read the board", Request{Op: "bodies", IDs: []string{id}})
	if err != nil {
		return nil, err
	}
	for i := range res.Rows {
		if res.Rows[i].ID == id {
			return &res.Rows[i], nil
		}
	}
	return nil, fmt.Errorf("postgres board: %s is not in the database", id)
}
