package claim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
)

// SetPriority changes the priority of session id, which must wait in
// todo/, and records it in the history as op "priority" by the client's
// owner (the person who changed it). The file is rewritten with one atomic
// exchange that fails if the session left todo/ meanwhile (claimed,
// removed): a claimed session is never resurrected in todo/, and its
// claimer's copy is left alone (ErrSessionNotAvailable).
//
// On a shared board the rewrite is a transition like a claim: the board is
// brought in line with its arbiter first, and the new priority stands only
// once the git remote or the database took it (an event whose Src and Dst
// are the session's file in todo/). If the session left todo/ there
// (claimed in another clone or machine), the change is refused with
// ErrSessionNotAvailable and the session is where the arbiter has it; if
// the arbiter could not answer, the file here gets its old content back.
// Either way nothing moved. The other clones see the new priority at their
// next refresh, and their next takes the new order.
func (c *Client) SetPriority(ctx context.Context, id string, p sessions.Priority) (sessions.Session, error) {
	if err := sessions.ValidateID(id); err != nil {
		return sessions.Session{}, &Error{Op: "priority", ID: id, Err: err}
	}
	return c.arbitrated(ctx, func() (sessions.Session, error) {
		return c.setPriority(id, p)
	}, ErrSessionNotAvailable)
}

func (c *Client) setPriority(id string, p sessions.Priority) (sessions.Session, error) {
	path := c.Board.Path(sessions.Todo, "", id)
	if err := c.checkArbiter(); err != nil {
		return sessions.Session{}, &Error{Op: "priority", ID: id, From: path, Err: err}
	}
	s, old, err := c.Board.Read(sessions.Place{State: sessions.Todo, Path: path})
	if err != nil {
		return sessions.Session{}, &Error{Op: "priority", ID: id, From: path, Err: ErrSessionNotAvailable}
	}
	if s.Priority == p {
		return s, nil
	}
	was := s.Priority
	content, err := sessions.SetField(old, "priority", p.String())
	if err != nil {
		return sessions.Session{}, &Error{Op: "priority", ID: id, From: path, Err: err}
	}
	if err := c.rewriteTodo(path, content); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			err = ErrSessionNotAvailable
		}
		return sessions.Session{}, &Error{Op: "priority", ID: id, From: path, Err: err}
	}
	e := sessions.Event{Op: "priority", ID: id, Owner: c.Owner,
		Reason: fmt.Sprintf("priority %s (was %s)", p, was), Src: path, Dst: path}
	if boardArbiter(c.Board) == nil {
		// The rewrite stands whatever becomes of its history line (as a
		// transition's does on a board that is not shared).
		_ = c.Board.Record(e)
		s.Priority = p
		return s, nil
	}
	if aerr := boardArbiter(c.Board)(c.Board.NewEvent(e)); aerr != nil {
		// Refused or unanswered: the arbiter put the session where it has
		// it (a claim elsewhere took it out of todo/ here), or left the
		// file as it was. A content rewrite has no old place to move back
		// to, so the old content is put back here, but only over this
		// rewrite's own: never over what the arbiter placed, and never
		// into todo/ again once the session left it (ReplaceExisting).
		if cur, rerr := fsx.ReadRegular(path); rerr == nil && bytes.Equal(cur, content) {
			if rerr := c.rewriteTodo(path, old); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				aerr = errors.Join(aerr, fmt.Errorf("put back %s's old priority in %s: %w", id, path, rerr))
			}
		}
		return sessions.Session{}, fromArbiter(aerr)
	}
	s.Priority = p
	return s, nil
}

// rewriteTodo replaces the content of the session file at path in todo/,
// only while it is there.
func (c *Client) rewriteTodo(path string, content []byte) error {
	leave, err := c.Board.EnterMove() // a rewrite is a move: not while a sync or a repair runs
	if err != nil {
		return err
	}
	err = fsx.ReplaceExisting(path, content, 0o644, !c.Board.NoSync)
	leave()
	if err == nil {
		c.Board.MarkChanged(sessions.Todo) // next's order changed (see PeekFresh)
	}
	return err
}
