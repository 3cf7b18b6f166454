package cli

import (
	"errors"
	"fmt"
	"github.com/pickup-dev/pickup/internal/textsafe"
	"slices"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/proc"
	ucli "github.com/urfave/cli/v2"
)

// run is one invocation: the environment and the resolved global options.
type run struct {
	env    *Env // its Stdout and Stderr escape what they print (see Main)
	raw    *Env // the streams as given
	json   bool
	dir    string
	owner  string
	noSync bool
	pid    int
	// commit is --commit: every transition becomes a git commit.
	commit bool
	// commits makes those commits and collects what failed (gitcmds.go).
	commits committer
	// shared is the shared board's arbiter, if config.yaml says shared:
	// (gitcmds_shared.go).
	shared sharedMode
	// proc is procEnv's, made on first use.
	proc *proc.Env
	// Whether --dir and --owner were given, even as "" (which is an error,
	// not a request for the default).
	dirSet, ownerSet bool
}

// Main runs pickup with args (args[0] is the program name) and returns the
// exit code.
func Main(env *Env, args []string) int {
	// Everything pickup prints goes through textsafe: a title, owner or
	// reason read from a file that holds an escape sequence or a bidi
	// override cannot reach the terminal raw, even where a field was
	// printed without textsafe.Line. r.raw keeps the streams as they are,
	// for what must pass unchanged: a command's own output (lock run),
	// work's status line on a terminal, show's byte-exact copy into a pipe.
	stdout, stderr := textsafe.NewWriter(env.Stdout), textsafe.NewWriter(env.Stderr)
	defer stdout.Flush()
	defer stderr.Flush()
	safe := *env
	safe.Stdout, safe.Stderr = stdout, stderr
	r := &run{env: &safe, raw: env}
	r.shared.proxy = env.GitProxy
	r.shared.hostname = env.Hostname
	r.shared.stderr = stderr
	r.shared.getenv = env.Getenv
	if len(args) > 1 && (slices.Contains(args[1:], "help") || slices.Contains(args[1:], "h")) {
		// Only a run that names help pays for this check.
		if code, ok := r.helpTopic(r.globalFlags(), args); ok {
			return code
		}
	}
	app := r.app(args)
	if flag := danglingFlag(app, args); flag != "" {
		return r.report(usageError("flag needs an argument: %s", flag))
	}
	err := app.Run(reorderArgs(app, args))
	err = r.commits.finish(r, err)
	if err == nil {
		return ExitOK
	}
	var ours exitError
	var theirs ucli.ExitCoder
	if isFlagError(err) || (!errors.As(err, &ours) && errors.As(err, &theirs)) {
		// urfave/cli's own exit errors ("No help topic for …") are usage
		// errors too: its exit codes are not ours.
		err = usageError("%v", err)
	}
	return r.report(err)
}

// danglingFlag returns the last argument if it is a flag that needs a value
// and has none, which reorderArgs leaves last so that it cannot take a
// positional argument as its value.
func danglingFlag(app *ucli.App, args []string) string {
	if len(args) < 2 || slices.Contains(args, "--") {
		return ""
	}
	last := args[len(args)-1]
	if !strings.HasPrefix(last, "-") || last == "-" || strings.Contains(last, "=") {
		return ""
	}
	flags, cmds, name := app.Flags, app.Commands, ""
	for _, a := range args[1 : len(args)-1] {
		if c := findCommand(cmds, a); c != nil {
			flags, cmds, name = c.Flags, c.Subcommands, c.Name
		}
	}
	if optionalWait[name] && strings.TrimLeft(last, "-") == "wait" {
		return ""
	}
	if takesValue(flags, last) {
		return last
	}
	return ""
}

func isFlagError(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "flag provided but not defined") ||
		strings.Contains(msg, "flag needs an argument") ||
		strings.Contains(msg, "invalid value") ||
		strings.Contains(msg, "Required flag")
}

func (r *run) app(args []string) *ucli.App {
	global := r.globalFlags()
	app := &ucli.App{
		Name:                   "pickup",
		Usage:                  "share one backlog of work sessions safely between many agents",
		Version:                version(),
		Description:            appDescription(global, args),
		Flags:                  global,
		HideHelpCommand:        false,
		UseShortOptionHandling: false,
		Writer:                 r.env.Stdout,
		ErrWriter:              r.env.Stderr,
		ExitErrHandler:         func(*ucli.Context, error) {}, // errors are reported by Main
		Before:                 r.resolve,
		OnUsageError: func(c *ucli.Context, err error, _ bool) error {
			return usageError("%v", err)
		},
		Commands: r.commands(global, args),
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("unknown command %q", c.Args().First())
			}
			return ucli.ShowAppHelp(c)
		},
	}
	for _, cmd := range app.Commands {
		r.addCommonFlags(cmd)
	}
	return app
}

// Global options work before and after the command name.
func (r *run) globalFlags() []ucli.Flag {
	return []ucli.Flag{
		stringFlag{&ucli.StringFlag{Name: "dir", Usage: "board directory (default: $PICKUP_DIR, else .spx/sessions in the main git work tree, else ./.spx/sessions)"}, []string{"dir"}},
		stringFlag{&ucli.StringFlag{Name: "owner", Usage: "who claims (default: $PICKUP_OWNER, $CLAUDE_CODE_SESSION_ID, $CLAUDE_SESSION_ID, $CODEX_THREAD_ID, else <user>-<host>)"}, []string{"owner"}},
		boolFlag{&ucli.BoolFlag{Name: "json", Usage: "print one JSON object (an array for list) on stdout"}, []string{"json"}},
		boolFlag{&ucli.BoolFlag{Name: "no-sync", Usage: "skip fsync: faster, but a power loss may undo recent transitions (also $PICKUP_NO_SYNC=1)"}, []string{"no-sync"}},
		intFlag{&ucli.IntFlag{Name: "pid", Usage: "the process whose life the owner's lease follows (default: $PICKUP_PID, else the agent or program that ran pickup)"}, []string{"pid"}},
		boolFlag{&ucli.BoolFlag{Name: "commit", Usage: "make every transition a git commit of the board paths it moved (also $PICKUP_COMMIT=1, or commit: true in <board>/config.yaml)"}, []string{"commit"}},
	}
}

// The global flags answer Names() from a fixed slice. urfave/cli computes
// a flag's names with a regular expression at every call, and calls it for
// every flag of the command and of the app each time it checks whether one
// flag is set, which it does for every flag on every run: with the six
// global flags on every command that was some 150 regular-expression runs,
// a tenth of a millisecond of each process. The wrappers embed the flag
// itself, so help, parsing and every other interface are the flag's own.
type (
	stringFlag struct {
		*ucli.StringFlag
		names []string
	}
	boolFlag struct {
		*ucli.BoolFlag
		names []string
	}
	intFlag struct {
		*ucli.IntFlag
		names []string
	}
)

func (f stringFlag) Names() []string { return f.names }
func (f boolFlag) Names() []string   { return f.names }
func (f intFlag) Names() []string    { return f.names }

func (r *run) addCommonFlags(cmd *ucli.Command) {
	cmd.Flags = append(cmd.Flags, r.globalFlags()...)
	before := cmd.Before
	cmd.Before = func(c *ucli.Context) error {
		if err := r.resolve(c); err != nil {
			return err
		}
		if before != nil {
			return before(c)
		}
		return nil
	}
	cmd.OnUsageError = func(c *ucli.Context, err error, _ bool) error {
		return usageError("%v", err)
	}
	for _, sub := range cmd.Subcommands {
		r.addCommonFlags(sub)
	}
}

// resolve reads the global options from whichever level set them.
//
// It asks each level which of its flags were given (LocalFlagNames) rather
// than asking IsSet of every global option: urfave/cli answers IsSet of an
// unset flag by running a regular expression over the name of every flag
// on every level, which cost `pickup next` about a tenth of a millisecond.
func (r *run) resolve(c *ucli.Context) error {
	// Outermost first, so that a flag given after the command name wins.
	lineage := c.Lineage()
	for i := len(lineage) - 1; i >= 0; i-- {
		x := lineage[i]
		if x.App == nil {
			continue // the bare context above the app's: it has no flags
		}
		for _, name := range x.LocalFlagNames() {
			switch name {
			case "dir":
				r.dir, r.dirSet = x.String("dir"), true
			case "owner":
				r.owner, r.ownerSet = x.String("owner"), true
			case "json":
				r.json = r.json || x.Bool("json")
			case "no-sync":
				r.noSync = r.noSync || x.Bool("no-sync")
			case "pid":
				r.pid = x.Int("pid")
			case "commit":
				r.commit = r.commit || x.Bool("commit")
			}
		}
	}
	if v := r.env.Getenv("PICKUP_NO_SYNC"); v != "" && v != "0" && v != "false" {
		r.noSync = true
	}
	return nil
}

// reorderArgs moves a command's flags in front of its arguments, so that
// `pickup claim ID --json` works like `pickup claim --json ID`. Everything
// after "--" is left alone.
func reorderArgs(app *ucli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	i := 1
	flags := app.Flags
	cmds := app.Commands
	for i < len(args) {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			out = append(out, a)
			if takesValue(flags, a) && i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
			i++
			continue
		}
		cmd := findCommand(cmds, a)
		if cmd == nil {
			return append(out, args[i:]...)
		}
		out = append(out, a)
		i++
		if len(cmd.Subcommands) > 0 {
			flags, cmds = cmd.Flags, cmd.Subcommands
			continue
		}
		var opts, pos []string
		for i < len(args) {
			a := args[i]
			if a == "--" {
				pos = append(pos, args[i:]...)
				break
			}
			if (a == "--wait" || a == "-wait") && optionalWait[cmd.Name] {
				// --wait takes an optional value: a bare one means no limit;
				// "--wait 10m" is read as "--wait=10m".
				if i+1 < len(args) && isDuration(args[i+1]) {
					opts = append(opts, "--wait="+args[i+1])
					i += 2
					continue
				}
				opts = append(opts, "--wait="+waitForever)
				i++
				continue
			}
			if strings.HasPrefix(a, "-") && a != "-" {
				if takesValue(cmd.Flags, a) && i+1 == len(args) {
					// A value flag without its value stays last, so that
					// it cannot take a positional argument as its value.
					pos = append(pos, a)
					i++
					continue
				}
				opts = append(opts, a)
				if takesValue(cmd.Flags, a) && i+1 < len(args) {
					opts = append(opts, args[i+1])
					i++
				}
			} else {
				pos = append(pos, a)
			}
			i++
		}
		return append(append(out, opts...), pos...)
	}
	return out
}

func isDuration(s string) bool {
	_, err := time.ParseDuration(s)
	return err == nil
}

// waitForever is what a bare --wait means.
const waitForever = "forever"

// optionalWait names the commands whose --wait may come without a value.
var optionalWait = map[string]bool{"next": true, "work": true}

func findCommand(cmds []*ucli.Command, name string) *ucli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

func takesValue(flags []ucli.Flag, arg string) bool {
	if strings.Contains(arg, "=") {
		return false
	}
	name := strings.TrimLeft(arg, "-")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				// Every flag type says whether it takes a value
				// (ucli.DocGenerationFlag); a bool does not.
				if v, ok := f.(interface{ TakesValue() bool }); ok {
					return v.TakesValue()
				}
				return true
			}
		}
	}
	return false
}

func (r *run) printf(format string, args ...any) { fmt.Fprintf(r.env.Stdout, format, args...) }
