package cli

// The lock subcommands that inspect and tend locks rather than take and
// give them: check, heartbeat, list, cleanup (lockcmds.go has the rest).

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
	ucli "github.com/urfave/cli/v2"
)

// lockStatus is what `pickup lock check --json` prints.
type lockStatus struct {
	Key string `json:"key"`
	// State is free (nobody holds it), held, dead or stale (a holder that
	// is gone: the next acquire takes the lock over).
	State  string          `json:"state"`
	Mine   bool            `json:"mine"` // held by this owner
	Holder *claim.LockInfo `json:"holder,omitempty"`
}

func (r *run) lockCheckCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "check",
		Usage:     "say who holds the lock on KEY; exit 3 if another owner holds it",
		UsageText: "pickup lock check KEY [--json]",
		Description: "Exits 0 if the lock is free (nobody holds it, or its holder is dead or stale) or held by\n" +
			"this owner, 3 if another owner holds it. With --json it prints\n" +
			"{\"key\",\"state\":\"free|held|dead|stale\",\"mine\",\"holder\"} whatever the exit code.\n\n" +
			"Example: pickup lock check repo:main && echo free",
		Action: func(c *ucli.Context) error {
			key, err := lockKey(c, "check")
			if err != nil {
				return err
			}
			locks, owner, err := r.locks()
			if err != nil {
				return err
			}
			info, held, err := locks.Check(key)
			if err != nil {
				return err
			}
			st := lockStatus{Key: key, State: "free"}
			if info.Token != "" || info.Corrupt {
				st.Holder, st.State = &info, string(info.State)
				if held {
					st.State = "held"
				}
			}
			st.Mine = held && info.Owner == owner
			other := held && !st.Mine
			if r.json {
				if err := r.printJSON(st); err != nil {
					return err
				}
				if other {
					return exitError{code: ExitNotAvailable, err: errors.New("held"), quiet: true}
				}
				return nil
			}
			switch {
			case other:
				return lockFail(&claim.LockHeldError{Key: key, Holder: info}, key, owner, proc.Process{})
			case st.Mine:
				r.printf("lock %s is held by you: %s\n", lockName(key), info.Holder())
			case st.Holder != nil:
				r.printf("lock %s is free: its holder %s is gone; the next acquire takes it over\n", lockName(key), info.Holder())
			default:
				r.printf("lock %s is free\n", lockName(key))
			}
			return nil
		},
	}
}

func (r *run) lockHeartbeatCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "heartbeat",
		Usage:     "record that this owner, which holds the lock on KEY, is still at work",
		UsageText: "pickup lock heartbeat KEY [--json]",
		Description: "Only holders that other hosts must judge by time need it: a holder alive on this host\n" +
			"keeps its lock without heartbeats, and `pickup lock run` heartbeats by itself.\n" +
			"Exits 3 if another owner holds the lock and 4 if nobody does: either way it is no\n" +
			"longer yours, so stop relying on it.\n\nExample: pickup lock heartbeat repo:main",
		Action: func(c *ucli.Context) error {
			key, err := lockKey(c, "heartbeat")
			if err != nil {
				return err
			}
			locks, owner, err := r.locks()
			if err != nil {
				return err
			}
			if err := locks.Heartbeat(key, owner); err != nil {
				return lockFail(err, key, owner, proc.Process{})
			}
			if r.json {
				info, _, err := locks.Check(key)
				if err != nil {
					return err
				}
				return r.printJSON(info)
			}
			return nil
		},
	}
}

func (r *run) lockListCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "list",
		Usage:     "list the locks: key, owner, state, process, age",
		UsageText: "pickup lock list [--json]",
		Description: "State is alive (held), dead (its process on this host has exited: free to take) or stale\n" +
			"(a holder on another host silent for its TTL: free to take).\n\nExample: pickup lock list --json",
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("lock list takes no arguments")
			}
			locks, _, err := r.locks()
			if err != nil {
				return err
			}
			infos, err := locks.List()
			if err != nil {
				return err
			}
			if r.json {
				if infos == nil {
					infos = []claim.LockInfo{}
				}
				return r.printJSON(infos)
			}
			if len(infos) == 0 {
				r.printf("no locks\n")
				return nil
			}
			now := r.env.Now()
			w := tabwriter.NewWriter(r.env.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "KEY\tOWNER\tSTATE\tPROCESS\tAGE\tHEARTBEAT")
			for _, i := range infos {
				if i.Corrupt {
					fmt.Fprintf(w, "%s\t?\tunreadable\t-\t%s\t-\n", lockName(i.Key), i.Age.Round(time.Second))
					continue
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s ago\n", lockName(i.Key), sanitize(i.Owner), i.State, sanitize(i.Process.String()),
					i.Age.Round(time.Second), now.Sub(i.HeartbeatAt).Round(time.Second))
			}
			return w.Flush()
		},
	}
}

func (r *run) lockCleanupCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "cleanup",
		Usage:     "remove the locks of holders that are dead, or stale for DUR",
		UsageText: "pickup lock cleanup [--stale DUR] [--json]",
		Description: "Removes locks whose holder on this host has exited, and locks of holders on other hosts\n" +
			"that have not heartbeat for their TTL and for --stale. It never removes a lock whose\n" +
			"holder is alive: --stale can make cleanup more patient than the TTL, never less. Acquire\n" +
			"takes over such locks by itself, so cleanup only tidies up. It also deletes the queue\n" +
			"files of keys that nobody waits for.\n\nExample: pickup lock cleanup --stale 1h",
		Flags: []ucli.Flag{
			&ucli.DurationFlag{Name: "stale", Usage: "also wait this long since the last heartbeat before removing a stale lock"},
		},
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("lock cleanup takes no arguments")
			}
			if c.Duration("stale") < 0 {
				return usageError("--stale must not be negative")
			}
			locks, _, err := r.locks()
			if err != nil {
				return err
			}
			removed, err := locks.Cleanup(c.Duration("stale"))
			sweepQueues(locks)
			if r.json {
				if removed == nil {
					removed = []claim.LockInfo{}
				}
				if jerr := r.printJSON(removed); jerr != nil {
					return jerr
				}
			} else {
				for _, i := range removed {
					r.printf("removed lock %s of %s\n", lockName(i.Key), i.Holder())
				}
				if len(removed) == 0 && err == nil {
					r.printf("no dead or stale locks\n")
				}
			}
			return err
		},
	}
}
