package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pickup-dev/pickup/claim"
	ucli "github.com/urfave/cli/v2"
)

func (r *run) watchCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "watch",
		Usage:     "print board changes as they happen",
		UsageText: "pickup watch [--json]",
		Description: "Prints one line per change: a session arriving in todo/, claimed by an owner, done,\n" +
			"or removed. With --json, one object per line:\n" +
			"   {\"time\",\"event\",\"id\",\"state\",\"owner\"}\n" +
			"An event \"rescan\" means the kernel dropped events: list the board to catch up.\n" +
			"Stops on SIGINT or SIGTERM.\n\nExample: pickup watch --json | jq .",
		Action: func(c *ucli.Context) error {
			b, err := r.board()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return claim.Watch(ctx, b, func(ch claim.Change) {
				if r.json {
					_ = r.printJSON(ch)
					return
				}
				line := ch.Time.Local().Format("15:04:05.000") + " " + ch.Event
				if ch.ID != "" {
					line += " " + ch.ID
				}
				if ch.Owner != "" {
					line += " by " + ch.Owner
				}
				r.printf("%s\n", line)
			})
		},
	}
}
