package gitremote

import (
	"context"
	"fmt"
	"strings"

	"github.com/pickup-dev/pickup/internal/arbiter"
)

// Sync is `pickup sync` on a git-shared board: every transition is on
// the remote already, so it only checks that the board is in line with
// it (Ready fetched).
func (a *Arbiter) Sync(ctx context.Context) (arbiter.Report, error) {
	sb := a.SB
	diffs, err := sb.InLine(ctx)
	if err != nil {
		return arbiter.Report{}, err
	}
	if len(diffs) > 0 {
		return arbiter.Report{}, &NotInLineError{Remote: sb.Remote, Branch: sb.Branch, Diffs: diffs}
	}
	return arbiter.Report{
		JSON: map[string]any{"remote": sb.Remote, "branch": sb.Branch, "shared": true},
		Text: []string{fmt.Sprintf("shared board: in line with %s/%s (every transition is pushed as it happens)", sb.Remote, sb.Branch)},
	}, nil
}

// NotInLineError: the board directory has sessions where the remote does
// not (a process killed between its move and its push).
type NotInLineError struct {
	Remote, Branch string
	Diffs          []Difference
}

func (e *NotInLineError) Error() string {
	var parts []string
	for _, d := range e.Diffs {
		parts = append(parts, d.String())
	}
	return fmt.Sprintf("shared board: not in line with %s/%s: %s", e.Remote, e.Branch, strings.Join(parts, "; "))
}

func (e *NotInLineError) Hint() string {
	return "a move here did not reach the remote (a process killed between its move and its push); run `pickup sync --repair` to put those sessions where the remote has them"
}

// Status: a git-shared board says nothing more in pickup status.
func (a *Arbiter) Status(context.Context) []string { return nil }

// Heard: the owners of other clones are judged by the leases this clone
// keeps for them; the remote adds nothing here.
func (a *Arbiter) Heard(string) (arbiter.Heard, bool) { return arbiter.Heard{}, false }
