package claim

import (
	"errors"
	"fmt"

	"github.com/pickup-dev/pickup/sessions"
)

// FilterError is ErrNothingAvailable from a queue with a tag filter
// (NextOptions.Filter): it says which filter, and how many sessions of
// todo/ it excluded, so that "nothing for --tag docs" is not mistaken for
// an empty board. Err is what the queue found among the sessions that
// match: ErrNothingAvailable, or a *BlockedError when they all wait on
// dependencies (errors.As finds it through this error).
type FilterError struct {
	Filter   sessions.TagFilter
	Excluded int // sessions of todo/ that the filter did not match
	Err      error
}

func (e *FilterError) Error() string {
	var be *BlockedError
	switch {
	case e.Excluded == 0:
		return e.Err.Error()
	case errors.As(e.Err, &be):
		return fmt.Sprintf("%s; %d other session(s) in todo do not match %s", e.Err, e.Excluded, e.Filter)
	}
	return fmt.Sprintf("%s: none of the %d session(s) in todo match %s", e.Err, e.Excluded, e.Filter)
}

func (e *FilterError) Unwrap() error { return e.Err }
