package cli

// One agent, one session, under pickup work. work claims a session and
// starts its command with PICKUP_SESSION_ID naming it, PICKUP_OWNER naming
// work's owner and PICKUP_DIR its board. An agent inside (a script, or
// Claude Code following /pickup) that runs `pickup next` must get that
// session, not a second one: two ways of feeding an agent must not stack,
// or work marks done a session nobody worked.

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// givenByWork returns the session that pickup work gave the command this
// pickup runs under, if it does: $PICKUP_SESSION_ID is set, pickup acts as
// $PICKUP_OWNER (no other --owner) on $PICKUP_DIR's board.
func (r *run) givenByWork(cl *claim.Client) (string, bool) {
	id, owner, dir := r.env.Getenv("PICKUP_SESSION_ID"), r.env.Getenv("PICKUP_OWNER"), r.env.Getenv("PICKUP_DIR")
	if id == "" || owner == "" || dir == "" || cl.Owner != owner || sessions.ValidateID(id) != nil {
		return "", false
	}
	if filepath.Clean(dir) != filepath.Clean(cl.Board.Dir) {
		return "", false
	}
	return id, true
}

// givenError: a command under pickup work asked for a session other than
// the one it was given, or for its session once it had finished it.
type givenError struct {
	err  error
	hint string
}

func (e *givenError) Error() string { return e.err.Error() }
func (e *givenError) Unwrap() error { return e.err }
func (e *givenError) Hint() string  { return e.hint }

// answerGiven answers `pickup next` (and `pickup claim` of the given id)
// under pickup work with the session work gave: no second claim.
func (r *run) answerGiven(cmd string, cl *claim.Client, id string) error {
	if err := cl.Holds(id); err != nil {
		where := "no longer held by this command"
		var ce *claim.Error
		if errors.As(err, &ce) && ce.State != "" {
			where = "in " + string(ce.State) + "/"
			if ce.Holder != "" {
				where = "in " + string(ce.State) + "/" + ce.Holder + "/"
			}
		}
		return &givenError{
			err: fmt.Errorf("%s: pickup work gave this command session %s, which is %s: %w",
				cmd, id, where, claim.ErrNothingAvailable),
			hint: "a command that pickup work runs works exactly the one session it was given ($PICKUP_SESSION_ID); exit, and work gives the next session to a new run",
		}
	}
	s, _, err := cl.Board.Read(sessions.Place{State: sessions.Doing, Owner: cl.Owner, Path: cl.Board.Path(sessions.Doing, cl.Owner, id)})
	if err != nil {
		return err
	}
	fmt.Fprintf(r.env.Stderr, "pickup: %s: this command runs under pickup work, which gave it session %s: that is its session (no second claim)\n", cmd, id)
	return r.printSession("claimed", s)
}

// refuseOtherThanGiven refuses `pickup claim ID` of another session under
// pickup work: one agent, one session.
func refuseOtherThanGiven(id, given string) error {
	return &givenError{
		err: fmt.Errorf("claim %s: this command runs under pickup work, which gave it session %s: %w",
			id, given, claim.ErrSessionNotAvailable),
		hint: "a command that pickup work runs works exactly the one session it was given ($PICKUP_SESSION_ID); work on " + given + ", or release it and exit",
	}
}
