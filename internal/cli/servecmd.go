package cli

import (
	"os"
	"syscall"

	ucli "github.com/urfave/cli/v2"
)

// webProgram is the web board's executable. Like pickup-board it is a
// program of its own (internal/cmd/pickup-web), so that net/http, the
// templates and the page never link into pickup, which Claude Code hooks
// start at every tool call, and so that pickup stays a program that needs
// no resolver.
const webProgram = "pickup-web"

// webInstall is how to install it beside pickup.
const webInstall = "go install github.com/pickup-dev/pickup/internal/cmd/pickup-web@latest"

func (r *run) serveCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "serve",
		Usage:     "the board in a browser, live: owners alive or dead, what waits, what moves (read-only unless --actions)",
		UsageText: "pickup serve [--addr HOST:PORT] [--token T] [--host NAME]... [--actions]",
		Description: "Serves one page of the board, the same state as `pickup board` and updated the same\n" +
			"moment over one Server-Sent Events stream (no polling; nothing runs while nothing changes):\n" +
			"owners with liveness and why, what each holds and for how long, todo in the order next\n" +
			"takes it with what each waits on, the sessions set aside, the locks, the history, the\n" +
			"sessions done per five minutes. Opening a session shows its file and its history; the\n" +
			"owner, tag and state filters are kept in the address.\n\n" +
			"It listens on 127.0.0.1:7077 (only this machine) unless --addr says otherwise. An --addr\n" +
			"beyond loopback needs a token (--token or $PICKUP_WEB_TOKEN, 16 characters or more),\n" +
			"which everyone who opens the board must have: share the printed address. It answers only\n" +
			"to its own address (add a DNS name with --host) and never to another site's page.\n" +
			"Read-only unless --actions: then a person on the page (who gives a name, recorded in the\n" +
			"history) can give back a dead or stale owner's sessions, requeue a set-aside session,\n" +
			"change a waiting session's priority and make a session; actions need the token, on\n" +
			"loopback too (a fresh one is made and printed). On a shared board each action stands only\n" +
			"once the git remote or the database took it, as the CLI's. See `pickup help web`.\n\n" +
			"The web board is a program of its own, pickup-web, found beside pickup or on $PATH:\n   " +
			webInstall + "\n\n" +
			"Examples:\n   pickup serve\n   pickup serve --addr 127.0.0.1:0 --actions\n   PICKUP_WEB_TOKEN=$(openssl rand -hex 16) pickup serve --addr 0.0.0.0:7077",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "addr", Usage: "where to listen, host:port (port 0: a free one)", Value: "127.0.0.1:7077"},
			&ucli.StringFlag{Name: "token", Usage: "the token a browser must present (default $PICKUP_WEB_TOKEN; needed beyond loopback)"},
			&ucli.StringSliceFlag{Name: "host", Usage: "another name the server answers to (a DNS name that points here)"},
			&ucli.BoolFlag{Name: "actions", Usage: "let the page give back, requeue, change priorities and make sessions"},
		},
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("serve takes no arguments")
			}
			b, err := r.board()
			if err != nil {
				return err
			}
			prog, ok := findCompanion(r.env.Getenv("PATH"), webProgram)
			if !ok {
				return exitError{code: ExitUsage, err: webMissing{}}
			}
			args := []string{webProgram, "--dir", b.Dir, "--addr", c.String("addr")}
			env := os.Environ()
			if c.IsSet("token") {
				// In the environment, not on the command line that ps shows.
				env = append(env, "PICKUP_WEB_TOKEN="+c.String("token"))
			}
			for _, h := range c.StringSlice("host") {
				args = append(args, "--host", h)
			}
			if c.Bool("actions") {
				args = append(args, "--actions")
			}
			// Handed over, as git runs git-foo: the server's exit status is
			// pickup's.
			return syscall.Exec(prog, args, env)
		},
	}
}

// webMissing: pickup-web is neither beside pickup nor on $PATH.
type webMissing struct{}

func (webMissing) Error() string {
	return "the web board program " + webProgram + " is not installed (looked beside pickup and on $PATH)"
}
func (webMissing) Hint() string {
	return "install it beside pickup: " + webInstall + " (release archives ship it beside pickup)"
}
