package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/textsafe"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

func (r *run) newCommand() *ucli.Command {
	tags, deps := &listValue{}, &listValue{}
	return &ucli.Command{
		Name:      "new",
		Usage:     "create a session in todo/ and print its id",
		UsageText: "pickup new [--priority P] [--title T] [--tag T]... [--depends-on ID]... [FILE|-]",
		Description: "The body is read from FILE, or from standard input with -. Without FILE, standard input\n" +
			"is read when it is a file (< body.txt) or a pipe (echo body | pickup new --title T) that\n" +
			"brings something or closes within a second; a pipe left open and silent is refused (exit 2),\n" +
			"a terminal or /dev/null is not read. A session with no title and no body is refused (exit 2).\n" +
			"In a `while read` loop, give pickup new </dev/null, or it reads the loop's input.\n" +
			"The id is the UTC time,\n" +
			"YYYY-MM-DD_HH-mm-ss, with a suffix (-2, -3, ...) when that second is taken.\n" +
			"Nothing is ever overwritten. Without --title, a body starting with \"# Heading\" gives it.\n\n" +
			"A FILE that starts with its own frontmatter (a line ---, YAML, a line ---: the session\n" +
			"file format of `pickup help sessions`) is the session as written: its priority, title, tags,\n" +
			"depends_on and other fields are kept, and each flag given replaces the field it names.\n" +
			"pickup sets the id and created_at (now) and attempts (0). Frontmatter that does not\n" +
			"parse is refused with FILE:LINE (exit 2) and nothing is created.\n\n" +
			"A comma separates tags: --tag 'a, b' is --tag a --tag b, as `tags: a, b` is in a file;\n" +
			"an empty tag is refused. --depends-on reads ids the same way.\n\n" +
			"Examples:\n" +
			"   pickup new --priority high --title \"Fix the parser\" --tag parser notes.md\n" +
			"   pickup new spec.md                  # spec.md has its own frontmatter\n" +
			"   pickup new --priority low spec.md   # the same, but low\n" +
			"   echo \"# Write docs\" | pickup new -\n" +
			"   id=$(pickup new --title Deploy --depends-on 2026-11-22_09-15-03)",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "priority", Aliases: []string{"p"}, Usage: "high, medium or low (default: the FILE's, else medium)"},
			&ucli.StringFlag{Name: "title", Aliases: []string{"t"}, Usage: "one-line title"},
			&ucli.GenericFlag{Name: "tag", Value: tags, Usage: "a tag; commas separate several (repeat for more)"},
			&ucli.GenericFlag{Name: "depends-on", Value: deps, Usage: "id of a session that must be done first; commas separate several (repeat for more)"},
		},
		Action: func(c *ucli.Context) error {
			if c.NArg() > 1 {
				return usageError("new takes at most one FILE (or - for standard input), got %d arguments", c.NArg())
			}
			o, err := newOverride(c, tags, deps)
			if err != nil {
				return err
			}
			var body []byte
			name := c.Args().First()
			switch name {
			case "":
				// Piped or redirected standard input is the body, as if
				// - had been given (see implicitBody).
				var read bool
				if body, read, err = implicitBody(r.env.Stdin); err != nil {
					return err
				}
				if read {
					name = "stdin"
				}
			case "-":
				name = "stdin"
				body, err = io.ReadAll(r.env.Stdin)
			default:
				body, err = os.ReadFile(name)
			}
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EISDIR) {
					return usageError("read body: %v; give an existing file, or - to read standard input", err)
				}
				return fmt.Errorf("read body: %w", err)
			}
			if o.Title == nil && len(bytes.TrimSpace(body)) == 0 {
				from := "no FILE and no standard input"
				if name != "" {
					from = name + " is empty"
				}
				return hintedUsage{usageError("nothing to create: no --title and no body (%s); nothing was created", from),
					"give --title T, or the body as FILE, or pipe it in: echo body | pickup new --title T"}
			}
			b, err := r.changingBoard()
			if err != nil {
				return err
			}
			s, err := b.CreateFrom(name, body, o)
			if err != nil {
				return err
			}
			if r.json {
				return r.printJSON(s)
			}
			r.printf("%s\n", s.ID)
			return nil
		},
	}
}

func (r *run) listCommand() *ucli.Command {
	tf := &tagFlags{}
	return &ucli.Command{
		Name:      "list",
		Aliases:   []string{"ls"},
		Usage:     "list sessions by state, in the order next takes them",
		UsageText: "pickup list [--state S]... [--mine] [--tag T]... [--not-tag T]... [--json]",
		Description: "States are todo, doing and done (default: all). A session whose frontmatter cannot be\n" +
			"read is marked with ! and still listed; `pickup doctor` says what is wrong. A todo session\n" +
			"whose depends_on are not all done says what it waits on (next skips it): \"(waits on ID)\"\n" +
			"after its title, \"waits_on\": [ids] in --json; one that waits forever says why:\n" +
			"\"(waits on ID; ID does not exist)\" or \"(waits on ID; dependency cycle A -> B -> A)\",\n" +
			"\"waits_on_missing\" or \"waits_on_cycle\" in --json. --mine lists only what this owner holds\n" +
			"(--owner, $PICKUP_OWNER, or the Claude Code session that runs pickup). --tag T lists only\n" +
			"sessions that carry T (repeat, or T1,T2: every one), --not-tag T those without it: what\n" +
			"`pickup next` with the same flags would choose from. Filters combine. A session held by\n" +
			"an owner whose processes all exited shows its owner as \"NAME (dead)\" (one silent past\n" +
			"the stale period \"NAME (stale)\"), \"owner_state\" in --json: the next claim returns it.\n\n" +
			"Examples:\n   pickup list\n   pickup list --state todo --json\n   pickup list --mine\n   pickup list --state todo --tag docs --not-tag blocked",
		Flags: append([]ucli.Flag{
			&ucli.StringSliceFlag{Name: "state", Aliases: []string{"s"}, Usage: "todo, doing or done (repeat for more)"},
			&ucli.BoolFlag{Name: "mine", Usage: "only the sessions this owner holds"},
		}, tf.flags()...),
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("list takes no arguments; filter with --state, --mine, --tag or --not-tag")
			}
			filter, err := tf.filter()
			if err != nil {
				return err
			}
			var states []sessions.State
			for _, s := range c.StringSlice("state") {
				st, err := sessions.ParseState(s)
				if err != nil {
					return usageError("--state: %v", err)
				}
				states = append(states, st)
			}
			b, err := r.viewBoard()
			if err != nil {
				return err
			}
			var list []sessions.Session
			if c.Bool("mine") {
				owner, err := r.ownerName()
				if err != nil {
					return err
				}
				if list, err = b.ListOwner(owner); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			} else if list, err = b.List(states...); err != nil {
				return err
			}
			list = filter.Keep(list)
			// A filtered list is not the whole board: what its sessions
			// wait on is looked up among all unfinished ones.
			waits, err := waitingOn(b, list, len(states) == 0 && !c.Bool("mine") && filter.Empty())
			if err != nil {
				return err
			}
			gone := r.goneOwners(b, list)
			if r.json {
				return printJSONList(r.env.Stdout, list, waits, gone)
			}
			return printTable(r.env.Stdout, list, waits, gone)
		},
	}
}

// printTable prints the sessions as the columns STATE OWNER PRIORITY ID
// TITLE, each padded to its widest cell plus two spaces (text/tabwriter's
// layout, which it replaces: tabwriter handles every cell on its own, a
// fifth of a second on a board of 100,000 sessions).
func printTable(w io.Writer, list []sessions.Session, waits map[int]sessions.Waits, gone map[string]claim.OwnerState) error {
	header := [4]string{"STATE", "OWNER", "PRIORITY", "ID"}
	cells := func(s sessions.Session) (state, owner, prio, mark string) {
		owner = s.Owner
		if owner == "" {
			owner = "-"
		}
		if st, ok := gone[s.Owner]; ok && s.State == sessions.Doing {
			owner += " (" + string(st) + ")"
		}
		if s.Problem != "" {
			mark = "! "
		}
		return string(s.State), owner, s.Priority.String(), mark
	}
	var width [4]int
	for i, h := range header {
		width[i] = len(h)
	}
	// State, owner, priority and id are ASCII (names are validated), so
	// their width is their length.
	for _, s := range list {
		state, owner, prio, mark := cells(s)
		width[0] = max(width[0], len(state))
		width[1] = max(width[1], len(owner))
		width[2] = max(width[2], len(prio))
		width[3] = max(width[3], len(mark)+len(s.ID))
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	line := make([]byte, 0, 256)
	pad := func(text string, col int) {
		line = append(line, text...)
		for n := len(text); n < width[col]+2; n++ {
			line = append(line, ' ')
		}
	}
	for i, h := range header {
		pad(h, i)
	}
	line = append(line, "TITLE\n"...)
	bw.Write(line)
	for i, s := range list {
		state, owner, prio, mark := cells(s)
		line = line[:0]
		pad(state, 0)
		pad(owner, 1)
		pad(prio, 2)
		pad(mark+s.ID, 3)
		line = append(line, sanitize(s.Title)...)
		if w := waits[i]; len(w.On) > 0 {
			line = append(line, sanitize(waitsText(w))...)
		}
		line = append(line, '\n')
		bw.Write(line)
	}
	return bw.Flush()
}

// printJSONList streams a JSON array one session at a time, so a board of
// 100,000 sessions is never held twice in memory.
// A session of todo/ that waits on unfinished dependencies gets one more
// key, "waits_on": the ids not done yet; and if it waits forever,
// "waits_on_missing" (those no state holds) or "waits_on_cycle" (a, b, a).
func printJSONList(w io.Writer, list []sessions.Session, waits map[int]sessions.Waits, gone map[string]claim.OwnerState) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteByte('[')
	for i, s := range list {
		if i > 0 {
			bw.WriteByte(',')
		}
		data, err := s.MarshalJSON()
		if err != nil {
			return err
		}
		if w := waits[i]; len(w.On) > 0 {
			extra, err := waitsJSON(w)
			if err != nil {
				return err
			}
			// data is one JSON object: add the keys before its closing brace.
			data = append(append(data[:len(data)-1:len(data)-1], extra...), '}')
		}
		if st, ok := gone[s.Owner]; ok && s.State == sessions.Doing {
			data = append(append(data[:len(data)-1:len(data)-1], `,"owner_state":"`+string(st)+`"`...), '}')
		}
		bw.Write(textsafe.JSON(data))
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

func (r *run) showCommand() *ucli.Command {
	return &ucli.Command{
		Name:        "show",
		Usage:       "print a session: where it is and its file",
		UsageText:   "pickup show [--json] ID",
		Description: "Example: pickup show 2026-11-22_09-15-03",
		Action: func(c *ucli.Context) error {
			if c.NArg() != 1 {
				return usageError("show needs exactly one session id")
			}
			id := c.Args().First()
			if err := sessions.ValidateID(id); err != nil {
				return err
			}
			b, err := r.viewBoard()
			if err != nil {
				return err
			}
			places, err := b.Locate(id)
			if err != nil {
				return err
			}
			if len(places) == 0 {
				return &claim.Error{Op: "show", ID: id, Err: claim.ErrSessionNotFound}
			}
			s, content, err := b.Read(places[0])
			if err != nil {
				return err
			}
			if len(places) > 1 {
				fmt.Fprintf(r.env.Stderr, "pickup: warning: session %s is in %d places; run `pickup doctor`\n", id, len(places))
			}
			if r.json {
				return r.printJSON(withFields(s, map[string]any{"content": string(content)}))
			}
			owner := ""
			if s.Owner != "" {
				owner = " by " + s.Owner
			}
			fmt.Fprintf(r.env.Stdout, "# %s: %s%s, %s\n", s.ID, s.State, sanitize(owner), sanitize(s.Path))
			if r.env.StdoutIsTerminal {
				_, err = io.WriteString(r.env.Stdout, textsafe.Text(string(content)))
				return err
			}
			// Into a pipe or a file: the file as it is, byte for byte, so
			// that it can be copied (it is not shown on a terminal).
			_, err = r.rawEnv().Stdout.Write(content)
			return err
		},
	}
}

// goneOwners judges the owners of the doing sessions in list, once each,
// and returns those that are dead or stale: their sessions go back to
// todo/ at the next claim or waiter's look, and list says so instead of a
// plain "doing".
func (r *run) goneOwners(b *sessions.Board, list []sessions.Session) map[string]claim.OwnerState {
	var gone map[string]claim.OwnerState
	judged := map[string]bool{}
	var leases *claim.Leases
	stale := claim.DefaultStale
	for _, s := range list {
		if s.State != sessions.Doing || judged[s.Owner] {
			continue
		}
		judged[s.Owner] = true
		if leases == nil {
			leases = r.leases(b)
			if cfg, err := b.Config(); err == nil && cfg.Stale > 0 {
				stale = cfg.Stale
			}
		}
		if st, _, _ := leases.Judge(s.Owner, stale); st == claim.OwnerDead || st == claim.OwnerStale {
			if gone == nil {
				gone = map[string]claim.OwnerState{}
			}
			gone[s.Owner] = st
		}
	}
	return gone
}
