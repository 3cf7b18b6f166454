package cli

import (
	"context"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// commandTable names every command and how to build it. A run builds only
// the command its arguments name (see commands): building all of them, with
// their flags, help texts and the global flags added to each, was about a
// thousand allocations, a tenth of what a Claude Code hook process may cost.
// The names here are the built commands' own (TestCommandTableNames).
func commandTable() []commandSpec {
	return []commandSpec{
		{[]string{"init"}, (*run).initCommand},
		{[]string{"new"}, (*run).newCommand},
		{[]string{"list", "ls"}, (*run).listCommand},
		{[]string{"show"}, (*run).showCommand},
		{[]string{"claim"}, func(r *run) *ucli.Command {
			return r.transitionCommand("claim", "claimed", "claim a session: move it from todo/ to doing/<owner>/",
				"Exactly one of any number of racing claimers wins; the others exit 3.\n"+
					"Claiming a session you already hold succeeds and changes nothing.\n\n"+
					"Example: pickup claim 2026-11-22_09-15-03",
				(*claim.Client).Claim)
		}},
		{[]string{"next"}, (*run).nextCommand},
		{[]string{"release"}, (*run).releaseCommand},
		{[]string{"done"}, func(r *run) *ucli.Command {
			return r.transitionCommand("done", "done", "finish a claimed session: move it from doing/<owner>/ to done/",
				"Only the owner who claimed a session can finish it.\n\nExample: pickup done 2026-11-22_09-15-03",
				(*claim.Client).Done)
		}},
		{[]string{"reopen"}, func(r *run) *ucli.Command {
			return r.transitionCommand("reopen", "reopened", "put a finished session back: move it from done/ to todo/",
				"Example: pickup reopen 2026-11-22_09-15-03",
				(*claim.Client).Reopen)
		}},
		{[]string{"watch"}, (*run).watchCommand},
		{[]string{"work"}, (*run).workCommand},
		{[]string{"requeue"}, (*run).requeueCommand},
		{[]string{"heartbeat"}, (*run).heartbeatCommand},
		{[]string{"reap"}, (*run).reapCommand},
		{[]string{"status"}, (*run).statusCommand},
		{[]string{"board"}, (*run).boardCommand},
		{[]string{"mcp"}, (*run).mcpCommand},
		{[]string{"serve"}, (*run).serveCommand},
		{[]string{"lock"}, (*run).lockCommand},
		{[]string{"doctor"}, (*run).doctorCommand},
		{[]string{"log"}, (*run).logCommand},
		{[]string{"sync"}, (*run).syncCommand},
		{[]string{"demo"}, (*run).demoCommand},
		{[]string{"hook"}, (*run).hookCommand},
		{[]string{"shared-beat"}, (*run).sharedBeatCommand},
		{[]string{"pg-history"}, (*run).pgHistoryCommand},
	}
}

// commandSpec is one top-level command: its name and aliases, and how to
// build it.
type commandSpec struct {
	names []string
	build func(*run) *ucli.Command
}

// commands builds the command that args name, or every command when they
// name none of them (no command, help, a misspelt name: urfave/cli's help
// and suggestions need the whole list). With one command built, urfave/cli
// runs it exactly as it would among all the others: it only ever looks up
// the command that was named.
func (r *run) commands(global []ucli.Flag, args []string) []*ucli.Command {
	table := commandTable()
	if name := commandArg(global, args); name != "" {
		for _, spec := range table {
			if slices.Contains(spec.names, name) {
				return []*ucli.Command{spec.build(r)}
			}
		}
	}
	all := make([]*ucli.Command, 0, len(table))
	for _, spec := range table {
		all = append(all, spec.build(r))
	}
	return all
}

// commandArg is the first argument that is neither a global option nor
// its value, as reorderArgs reads them; "" if there is none before "--".
func commandArg(global []ucli.Flag, args []string) string {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return ""
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			if takesValue(global, a) {
				i++
			}
			continue
		}
		return a
	}
	return ""
}

func (r *run) initCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "init",
		Usage:     "create the board (todo/, doing/, done/) if it is not there yet",
		UsageText: "pickup init [--dir DIR] [--claude|--codex|--gemini|--opencode [--uninstall] | --agents | --shared [--follow] [REMOTE]]",
		Description: "Creates the board directories and .pickup/ (machine-local caches, leases and locks,\n" +
			"ignored by git), and the board's .gitignore (runtime and temporary files) and\n" +
			".gitattributes (events.log merge=union: merges of the event log never conflict);\n" +
			"existing ones are left alone. Safe to run again on an existing board.\n" +
			"--claude also installs the Claude Code integration in the repository's .claude/: the\n" +
			"/pickup and /handoff skills, and hooks in settings.local.json (read from every folder\n" +
			"of the repository) that register, heartbeat and release each Claude Code session's\n" +
			"claims and keep agents from editing board files (merged into the settings there; a\n" +
			"second run changes nothing). --claude --uninstall removes exactly what --claude added.\n" +
			"(Or install pickup's Claude Code plugin instead: see `pickup help claude`.)\n" +
			"--codex and --gemini do the same for Codex CLI (.codex/hooks.json) and Gemini CLI\n" +
			"(.gemini/settings.json, and /pickup in .gemini/commands/), with the skills in\n" +
			".agents/skills/, which opencode reads too (--opencode: the skills only); --uninstall\n" +
			"with any of them removes what it added. See `pickup help agents`.\n" +
			"--agents prints a section for AGENTS.md that teaches other agents the protocol.\n\n" +
			"Examples:\n   pickup init\n   pickup init --claude\n   pickup init --codex --gemini\n   pickup init --agents >> AGENTS.md",
		Flags: append(initClaudeFlags(), &ucli.BoolFlag{Name: "shared", Usage: "share the board with every clone through a git remote (argument: the remote, default origin): claims are won at the remote; run again, it puts back config.yaml's shared settings and re-creates a deleted board branch from the history this clone knows"},
			&ucli.BoolFlag{Name: "follow", Usage: "with --shared: follow what config.yaml on the board branch says now (no longer shared, another remote or branch), after a person changed it on purpose"}),
		Action: func(c *ucli.Context) error {
			if c.Bool("follow") && !c.Bool("shared") {
				return usageError("--follow goes with --shared: pickup init --shared --follow")
			}
			if c.Bool("shared") {
				return r.initShared(c)
			}
			if c.NArg() > 0 {
				return usageError("init takes no arguments; use --dir DIR to choose the board")
			}
			if wantsIntegration(c) {
				return r.initIntegration(c)
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
func (r *run) transitionCommand(name, verb, usage, desc string, do func(*claim.Client, context.Context, string) (sessions.Session, error)) *ucli.Command {
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
			r.shared.trustRecent = true
			cl, err := r.client()
			if err != nil {
				return err
			}
			if name == "claim" {
				if given, ok := r.givenByWork(cl); ok {
					if id != given {
						return refuseOtherThanGiven(id, given)
					}
					return r.answerGiven("claim", cl, id)
				}
				if err := r.register(cl); err != nil {
					return err
				}
			}
			s, err := do(cl, c.Context, id)
			if err != nil {
				return err
			}
			return r.printSession(verb, s)
		},
	}
}

func (r *run) nextCommand() *ucli.Command {
	tf := &tagFlags{}
	return &ucli.Command{
		Name:      "next",
		Usage:     "claim the best available session",
		UsageText: "pickup next [--wait[=DUR]] [--tag T]... [--not-tag T]... [--json]",
		Description: "Takes the session that comes first by priority (high, medium, low), then created_at\n" +
			"(oldest first), then id, skipping sessions whose depends_on are not all done.\n" +
			"A lost race moves on to the next candidate. Exits 3 when nothing is available; if sessions\n" +
			"are left that wait on dependencies, the error says what they wait on, first those that\n" +
			"never can be taken (a dependency that does not exist, a cycle of depends_on).\n" +
			"With --wait it blocks until a session can be claimed (a new one, a release, a reap,\n" +
			"a dependency finishing) and exits 3 only at the timeout; --wait alone waits forever.\n" +
			"Under `pickup work` ($PICKUP_SESSION_ID set, acting as $PICKUP_OWNER) next claims\n" +
			"nothing: it answers with the session work gave the command (saying so on stderr), and\n" +
			"exits 3 once that session is done or released; `claim` of any other session exits 3.\n" +
			nextTagHelp + "\n\n" +
			"Examples:\n   pickup next --json\n   pickup next --wait=10m\n   pickup next --tag docs --wait=10m",
		Flags: append([]ucli.Flag{
			&ucli.StringFlag{Name: "wait", Usage: "wait up to DUR for a session (--wait alone: no limit)"},
		}, tf.flags()...),
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("next takes no arguments; to claim a given session use `pickup claim ID`")
			}
			wait, timeout, err := waitFlag(c)
			if err != nil {
				return err
			}
			filter, err := tf.filter()
			if err != nil {
				return err
			}
			r.shared.trustRecent = !wait
			cl, err := r.client()
			if err != nil {
				return err
			}
			if given, ok := r.givenByWork(cl); ok {
				return r.answerGiven("next", cl, given)
			}
			if err := r.register(cl); err != nil {
				return err
			}
			var s sessions.Session
			if wait {
				// Only a waiting next catches signals, to stop waiting
				// cleanly: see interruptible.
				ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				if timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, timeout)
					defer cancel()
				}
				s, err = cl.NewQueue(claim.NextOptions{Filter: filter}).Wait(ctx, claim.WaitOptions{})
			} else {
				s, err = cl.NewQueue(claim.NextOptions{Filter: filter}).Next(context.Background())
			}
			err = cl.Explain(err) // once, at the end: not at every wake-up
			if err != nil {
				return err
			}
			return r.printSession("claimed", s)
		},
	}
}

// waitFlag reads --wait: absent, "forever" (a bare --wait) or a duration.
func waitFlag(c *ucli.Context) (wait bool, timeout time.Duration, err error) {
	if !c.IsSet("wait") {
		return false, 0, nil
	}
	v := c.String("wait")
	if v == waitForever || v == "" || v == "0" {
		return true, 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return false, 0, usageError("--wait=%q: give a duration such as 30s or 10m, or --wait alone to wait with no limit", v)
	}
	return true, d, nil
}

func (r *run) releaseCommand() *ucli.Command {
	cmd := r.transitionCommand("release", "released", "give a claimed session back: move it from doing/<owner>/ to todo/",
		"Only the owner who claimed a session can release it. --all releases every session this\n"+
			"owner holds and ends its lease (for the end of an agent session).\n\n"+
			"Examples:\n   pickup release 2026-11-22_09-15-03\n   pickup release --all",
		(*claim.Client).Release)
	cmd.UsageText = "pickup release [--json] ID | --all"
	cmd.Flags = append(cmd.Flags, &ucli.BoolFlag{Name: "all", Usage: "release every session this owner holds"})
	one := cmd.Action
	cmd.Action = func(c *ucli.Context) error {
		if !c.Bool("all") {
			return one(c)
		}
		if c.NArg() > 0 {
			return usageError("release --all takes no session ids")
		}
		cl, err := r.client()
		if err != nil {
			return err
		}
		released, err := cl.ReleaseAll(context.Background())
		_ = r.leases(cl.Board).Remove(cl.Owner)
		if r.json {
			if released == nil {
				released = []sessions.Session{}
			}
			if jerr := r.printJSON(released); jerr != nil {
				return jerr
			}
		} else {
			for _, s := range released {
				r.printf("released %s\n", describe(s))
			}
			if len(released) == 0 && err == nil {
				r.printf("%s holds no sessions\n", cl.Owner)
			}
		}
		return err
	}
	return cmd
}
