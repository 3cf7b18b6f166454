package cli

import "context"

// workPoll makes `pickup work --wait` on a PostgreSQL board wake for
// sessions made or released on other machines within milliseconds: the
// database is read whenever a session arrives in todo anywhere
// (LISTEN/NOTIFY, see pgPoll), which writes it into todo/ here, where
// the pool's watch sees it. It returns a function that stops it. Other
// boards are watched as they are.
func (r *run) workPoll(ctx context.Context, wait bool) func() {
	if !wait {
		return func() {}
	}
	pg := r.shared.pgBoard()
	if pg == nil {
		return func() {}
	}
	return r.pgPoll(ctx, pg)
}
