package cli

import (
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// tagFlags are --tag and --not-tag, shared by next, work and list: one
// filter (sessions.TagFilter), read by the tag rule of `pickup new`.
type tagFlags struct{ tags, notTags listValue }

func (t *tagFlags) flags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.GenericFlag{Name: "tag", Value: &t.tags, Usage: "only sessions with this tag; commas separate several, and a session must carry every one (repeat for more)"},
		&ucli.GenericFlag{Name: "not-tag", Value: &t.notTags, Usage: "only sessions without this tag (repeat for more)"},
	}
}

// filter reads the flags as a filter: exit 2, naming the tag, for an
// empty tag or one given both with --tag and --not-tag.
func (t *tagFlags) filter() (sessions.TagFilter, error) {
	tags, err := splitList("tag", "tag", t.tags.given)
	if err != nil {
		return sessions.TagFilter{}, err
	}
	notTags, err := splitList("not-tag", "tag", t.notTags.given)
	if err != nil {
		return sessions.TagFilter{}, err
	}
	f, err := sessions.NewTagFilter(tags, notTags)
	if err != nil {
		return sessions.TagFilter{}, usageError("%v", err)
	}
	return f, nil
}

// nextTagHelp is what next's help says of --tag and --not-tag.
const nextTagHelp = "--tag T takes only sessions that carry tag T (repeat it, or write T1,T2: a session must\n" +
	"carry every one); --not-tag T skips those that carry T. Among the sessions that match, the\n" +
	"order is the same as without a filter. With --wait, only a matching session wakes the\n" +
	"waiter. When nothing matches, next exits 3 and says how many sessions the filter excluded."
