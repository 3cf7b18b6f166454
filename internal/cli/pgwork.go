package cli

import "context"

// workPoll keeps a shared board in line while `pickup work --wait` waits
// (see arbiter.watch), so that sessions made or released in other clones
// land in todo/, where the pool's watch sees them: on a PostgreSQL board
// within milliseconds (LISTEN/NOTIFY). It returns a function that stops
// it.
func (r *run) workPoll(ctx context.Context, wait bool) func() {
	if !wait {
		return func() {}
	}
	return r.sharedPoll(ctx)
}
