package cli

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

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

// stdinWait is how long `pickup new` without FILE waits for a pipe on its
// standard input to bring something (or close) before it refuses.
const stdinWait = time.Second

// implicitBody decides whether `pickup new` without FILE reads the body
// from standard input, and reads it. The rule, so that input is never
// dropped silently and pickup never hangs on a stdin nobody writes:
//
//   - a regular file (`pickup new --title x < body.txt`, and bash's
//     `<<<"body"` and here-documents where they are files): read;
//   - a pipe or socket (`echo body | pickup new --title x`, and bash's
//     here-strings where they are pipes): read once something arrives, or
//     the writer closes it, within stdinWait. A pipe that stays open and
//     silent longer (an agent harness that holds stdin open and never
//     writes, or a slow producer) is refused with a hint: pickup can tell
//     neither apart nor wait for ever, and must not drop what may come;
//   - a terminal, /dev/null or any other device: not read (a terminal is
//     a person who did not mean to type a body; a device may never end);
//   - a stream that is not a file (a test's reader): not read.
//
// read says whether standard input was read.
func implicitBody(in io.Reader) (body []byte, read bool, err error) {
	f, ok := in.(*os.File)
	if !ok || f == nil {
		return nil, false, nil
	}
	info, err := f.Stat()
	if err != nil {
		return nil, false, nil // closed (0<&-): nothing to read
	}
	mode := info.Mode()
	switch {
	case mode.IsRegular():
	case mode&(fs.ModeNamedPipe|fs.ModeSocket) != 0:
		fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN}}
		deadline := time.Now().Add(stdinWait)
		for {
			n, err := unix.Poll(fds, int(time.Until(deadline).Milliseconds()))
			if err == unix.EINTR && time.Now().Before(deadline) {
				continue
			}
			if err != nil {
				return nil, false, fmt.Errorf("wait for standard input: %w", err)
			}
			if n == 0 {
				return nil, false, hintedUsage{usageError("standard input is a pipe that brought nothing in %s and is still open; nothing was created", stdinWait),
					"give the body as FILE, or - to wait for standard input as long as it takes, or run `pickup new --title T </dev/null` for a session without a body"}
			}
			break
		}
	default:
		return nil, false, nil
	}
	body, err = io.ReadAll(f)
	if err != nil {
		return nil, false, fmt.Errorf("read body from standard input: %w", err)
	}
	return body, true, nil
}

// hintedUsage is a usage error that says what to do instead.
type hintedUsage struct {
	err  error
	hint string
}

func (e hintedUsage) Error() string { return e.err.Error() }
func (e hintedUsage) Unwrap() error { return e.err }
func (e hintedUsage) Hint() string  { return e.hint }
