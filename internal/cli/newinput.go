package cli

import (
	"fmt"
	"strings"

	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// listValue collects each value of a repeatable flag as typed, so that the
// tag rule (splitList), not the flag library, decides what a comma means,
// and an error can quote what was typed.
type listValue struct{ given []string }

func (l *listValue) Set(v string) error { l.given = append(l.given, v); return nil }
func (l *listValue) String() string     { return strings.Join(l.given, ",") }

// splitList reads the values of --tag or --depends-on by the tag rule: a
// comma separates two, as in a frontmatter line `tags: a, b`; blanks
// around each are dropped; an empty one (--tag ”, --tag a,,b) is a
// mistake, refused before anything is created.
func splitList(flag, what string, given []string) ([]string, error) {
	var out []string
	for _, v := range given {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				return nil, usageError("--%s %q: empty %s: a comma separates %ss, so give each one a name (--%s a,b or --%s a --%s b)",
					flag, v, what, what, flag, flag, flag)
			}
			out = append(out, part)
		}
	}
	return out, nil
}

// newOverride reads the flags of `pickup new` as the fields they set; a
// flag not given sets nothing, so a FILE's own frontmatter keeps its field.
func newOverride(c *ucli.Context, tags, deps *listValue) (sessions.Override, error) {
	var o sessions.Override
	if c.IsSet("priority") {
		p, err := sessions.ParsePriority(c.String("priority"))
		if err != nil {
			return o, usageError("--priority: %v", err)
		}
		o.Priority = &p
	}
	if t := c.String("title"); t != "" {
		o.Title = &t
	}
	var err error
	if o.Tags, err = splitList("tag", "tag", tags.given); err != nil {
		return o, err
	}
	if o.DependsOn, err = splitList("depends-on", "id", deps.given); err != nil {
		return o, err
	}
	for _, dep := range o.DependsOn {
		if err := sessions.ValidateID(dep); err != nil {
			return o, fmt.Errorf("--depends-on: %w", err)
		}
	}
	return o, nil
}
