package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

func (r *run) commands() []*ucli.Command {
	return []*ucli.Command{
		r.initCommand(),
		r.newCommand(),
		r.listCommand(),
		r.showCommand(),
		r.transitionCommand("claim", "claimed", "claim a session: move it from todo/ to doing/<owner>/",
			"Exactly one of any number of racing claimers wins; the others exit 3.\n"+
				"Claiming a session you already hold succeeds and changes nothing.\n\n"+
				"Example: pickup claim 2026-11-22_09-15-03",
			(*claim.Client).Claim),
		r.nextCommand(),
		r.transitionCommand("release", "released", "give a claimed session back: move it from doing/<owner>/ to todo/",
			"Only the owner who claimed a session can release it.\n\nExample: pickup release 2026-11-22_09-15-03",
			(*claim.Client).Release),
		r.transitionCommand("done", "done", "finish a claimed session: move it from doing/<owner>/ to done/",
			"Only the owner who claimed a session can finish it.\n\nExample: pickup done 2026-11-22_09-15-03",
			(*claim.Client).Done),
		r.transitionCommand("reopen", "reopened", "put a finished session back: move it from done/ to todo/",
			"Example: pickup reopen 2026-11-22_09-15-03",
			(*claim.Client).Reopen),
		r.doctorCommand(),
		r.demoCommand(),
	}
}

func (r *run) initCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "init",
		Usage:     "create the board (todo/, doing/, done/) if it is not there yet",
		UsageText: "pickup init [--dir DIR]",
		Description: "Creates the board directories and .pickup/ (machine-local caches, leases and locks,\n" +
			"ignored by git). Safe to run again on an existing board.\n\nExample: pickup init",
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("init takes no arguments; use --dir DIR to choose the board")
			}
			dir, err := r.boardDir()
			if err != nil {
				return err
			}
			b, err := sessions.Init(dir)
			if err != nil {
				return err
			}
			if r.json {
				return r.printJSON(map[string]string{"dir": b.Dir})
			}
			r.printf("board ready at %s\n", b.Dir)
			return nil
		},
	}
}

// transitionCommand builds claim, release, done and reopen: one session id,
// one transition.
func (r *run) transitionCommand(name, verb, usage, desc string, do func(*claim.Client, string) (sessions.Session, error)) *ucli.Command {
	return &ucli.Command{
		Name:        name,
		Usage:       usage,
		UsageText:   "pickup " + name + " [--json] ID",
		Description: desc,
		Action: func(c *ucli.Context) error {
			if c.NArg() != 1 {
				return usageError("%s needs exactly one session id, e.g. pickup %s 2026-11-22_09-15-03", name, name)
			}
			id := c.Args().First()
			if err := sessions.ValidateID(id); err != nil {
				return err
			}
			cl, err := r.client()
			if err != nil {
				return err
			}
			s, err := do(cl, id)
			if err != nil {
				return err
			}
			return r.printSession(verb, s)
		},
	}
}

func (r *run) nextCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "next",
		Usage:     "claim the best available session",
		UsageText: "pickup next [--json]",
		Description: "Takes the session that comes first by priority (high, medium, low), then created_at\n" +
			"(oldest first), then id, skipping sessions whose depends_on are not all done.\n" +
			"A lost race moves on to the next candidate. Exits 3 when nothing is available.\n\n" +
			"Example: pickup next --json",
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("next takes no arguments; to claim a given session use `pickup claim ID`")
			}
			cl, err := r.client()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			s, err := cl.Next(ctx)
			if err != nil {
				return err
			}
			return r.printSession("claimed", s)
		},
	}
}
