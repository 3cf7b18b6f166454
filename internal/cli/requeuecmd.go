package cli

// pickup requeue: sessions back from failed/ to todo/, by id or in bulk.
// After a broken run of pickup work (a command that failed for reasons of
// its own, not the sessions') the whole backlog may sit in failed/:
// --all and --failed-since return it in one command, --dry-run first shows
// what that would do.

import (
	"context"
	"fmt"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

func (r *run) requeueCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "requeue",
		Usage:     "return set-aside sessions from failed/ to todo/",
		UsageText: "pickup requeue [--dry-run] [--json] ID... | --all | --failed-since DUR|TIME",
		Description: "pickup work (and reap) sets a session aside in failed/ after max_attempts failures;\n" +
			"requeue resets its attempt count (last_error stays, for the record) and puts it back in\n" +
			"the queue. --all takes every session in failed/; --failed-since only those set aside\n" +
			"since then, a duration back from now (2h) or a time (2026-11-22, 2026-11-22T09:00:00Z),\n" +
			"as the event log tells (else the file's modification time). --dry-run lists what would\n" +
			"be requeued, with attempts, when and the last error, and changes nothing.\n" +
			"A session that cannot be requeued (a copy already in todo/) is reported and the rest\n" +
			"go on; the exit code is that of the first such error.\n\n" +
			"Examples:\n   pickup requeue 2026-11-22_09-15-03\n   pickup requeue --failed-since 1h --dry-run\n   pickup requeue --all",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "all", Usage: "every session set aside in failed/"},
			&ucli.StringFlag{Name: "failed-since", Usage: "only sessions set aside since DUR ago (2h) or since TIME (2026-11-22T09:00:00Z)"},
			&ucli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "say what would be requeued, change nothing"},
		},
		Action: r.requeue,
	}
}

func (r *run) requeue(c *ucli.Context) error {
	ids := c.Args().Slice()
	bulk := c.Bool("all") || c.IsSet("failed-since")
	switch {
	case len(ids) > 0 && bulk:
		return usageError("give session ids or --all/--failed-since, not both")
	case len(ids) == 0 && !bulk:
		return usageError("requeue needs session ids, --all or --failed-since DUR, e.g. pickup requeue 2026-11-22_09-15-03 or pickup requeue --failed-since 1h --dry-run")
	}
	var opts claim.RequeueOptions
	if c.IsSet("failed-since") {
		since, err := parseSince(c.String("failed-since"), r.env.Now())
		if err != nil {
			return err
		}
		opts.Since = since
	}
	opts.DryRun = c.Bool("dry-run")
	for _, id := range ids {
		if err := sessions.ValidateID(id); err != nil {
			return err
		}
	}
	var list []claim.Requeued
	var first error
	if opts.DryRun {
		b, err := r.board()
		if err != nil {
			return err
		}
		if list, err = r.wouldRequeue(b, ids, opts); err != nil {
			return err
		}
	} else {
		cl, err := r.client()
		if err != nil {
			return err
		}
		if !bulk {
			if len(ids) == 1 { // as it always was: one object, one session
				s, err := cl.Requeue(context.Background(), ids[0])
				if err != nil {
					return err
				}
				return r.printSession("requeued", s)
			}
			for _, id := range ids {
				s, err := cl.Requeue(context.Background(), id)
				if err != nil && first == nil {
					first = err
				}
				list = append(list, claim.Requeued{Now: s, Err: err, Was: sessions.SetAside{Session: sessions.Session{ID: id}}})
			}
		} else {
			list, first = cl.RequeueSetAside(context.Background(), opts)
		}
	}
	if err := r.printRequeued(list, opts, bulk); err != nil {
		return err
	}
	return first
}

// wouldRequeue is a dry run: the sessions of failed/ that ids (or opts)
// select, none moved. An id that is not in failed/ is reported as
// requeue would report it.
func (r *run) wouldRequeue(b *sessions.Board, ids []string, opts claim.RequeueOptions) ([]claim.Requeued, error) {
	all, err := b.ListSetAside()
	if err != nil {
		return nil, err
	}
	byID := map[string]sessions.SetAside{}
	for _, x := range all {
		byID[x.ID] = x
	}
	var out []claim.Requeued
	if len(ids) == 0 {
		for _, x := range all {
			if opts.Since.IsZero() || !x.Since.Before(opts.Since) {
				out = append(out, claim.Requeued{Was: x})
			}
		}
		return out, nil
	}
	for _, id := range ids {
		x, ok := byID[id]
		if !ok {
			// As requeue itself would answer: not available where it is,
			// or not found at all.
			e := &claim.Error{Op: "requeue", ID: id, Err: claim.ErrSessionNotFound}
			if places, err := b.Locate(id); err == nil && len(places) > 0 {
				e.Err, e.State, e.Holder = claim.ErrSessionNotAvailable, places[0].State, places[0].Owner
			}
			return nil, e
		}
		out = append(out, claim.Requeued{Was: x})
	}
	return out, nil
}

// requeuedJSON is one session of requeue's --json array: the session (as
// it is now in todo/, or in failed/ for a dry run) with why it had been set
// aside and when.
func requeuedJSON(x claim.Requeued) map[string]any {
	s := x.Now
	if s.ID == "" {
		s = x.Was.Session
	}
	extra := map[string]any{"last_error": x.Was.LastError}
	if !x.Was.Since.IsZero() {
		extra["set_aside_at"] = x.Was.Since.UTC().Format(time.RFC3339Nano)
	}
	if x.Err != nil {
		extra["error"] = x.Err.Error()
	}
	return withFields(s, extra)
}

func (r *run) printRequeued(list []claim.Requeued, opts claim.RequeueOptions, bulk bool) error {
	if r.json {
		out := make([]map[string]any, 0, len(list))
		for _, x := range list {
			out = append(out, requeuedJSON(x))
		}
		return r.printJSON(out)
	}
	done := 0
	for _, x := range list {
		switch {
		case x.Err != nil:
			r.printf("could not requeue %s: %s\n", x.Was.ID, sanitize(x.Err.Error()))
		case opts.DryRun:
			r.printf("would requeue %s (%s, set aside %s)", x.Was.ID, attemptsText(x.Was.Attempts), sinceText(x.Was.Since, r.env.Now()))
			if x.Was.LastError != "" {
				r.printf(": %s", sanitize(x.Was.LastError))
			}
			r.printf("\n")
		default:
			done++
			r.printf("requeued %s\n", describe(x.Now))
		}
	}
	switch {
	case len(list) == 0 && bulk && opts.Since.IsZero():
		r.printf("nothing is set aside in failed/\n")
	case len(list) == 0 && bulk:
		r.printf("nothing was set aside in failed/ since %s\n", opts.Since.UTC().Format(time.RFC3339))
	case done > 0:
		r.printf("%d session(s) requeued\n", done)
	}
	return nil
}

// parseSince reads --failed-since: a duration back from now, or a time
// (RFC 3339, or a date: midnight, local time).
func parseSince(v string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, v, time.Local); err == nil {
		return t, nil
	}
	return time.Time{}, usageError("--failed-since %q: give a duration such as 2h (set aside in the last two hours) or a time such as 2026-11-22 or 2026-11-22T09:00:00Z", v)
}

func attemptsText(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

// sinceText says when: how long ago within a day, else the time itself.
func sinceText(t, now time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	if ago := now.Sub(t); ago >= 0 && ago < 24*time.Hour {
		return ago.Round(time.Second).String() + " ago"
	}
	return t.UTC().Format(time.RFC3339)
}
