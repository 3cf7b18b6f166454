package cli

// pickup lock: named locks (claim.Locks) from the command line.

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/claimhook"
	"github.com/pickup-dev/pickup/internal/proc"
	ucli "github.com/urfave/cli/v2"
)

// Defaults of pickup lock.
const (
	// lockRunGrace is how long a stopped CMD may take to exit before it is
	// killed (lock run), and how long --supersede gives the run it stops.
	lockRunGrace = 10 * time.Second
	// A waiting acquire watches the lock's record file and wakes when it
	// is removed or replaced. It also reads the lock (no write) with
	// jittered exponential backoff, because a holder that dies leaves its
	// record in place: from lockWatchPollFirst to lockWatchPollMax, or
	// from lockPollFirst to lockPollMax if the file cannot be watched.
	lockWatchPollFirst = 20 * time.Millisecond
	lockWatchPollMax   = 500 * time.Millisecond
	lockPollFirst      = 2 * time.Millisecond
	lockPollMax        = 100 * time.Millisecond
	// After SIGKILL a process is gone within milliseconds; waiting longer
	// means it is stuck in the kernel.
	lockKillWait = 5 * time.Second
)

// envLockKey tells the command of `pickup lock run` which lock it runs
// under.
const envLockKey = "PICKUP_LOCK_KEY"

func (r *run) lockCommand() *ucli.Command {
	cmd := &ucli.Command{
		Name:      "lock",
		Usage:     "named locks: a mutex per key (a repository, a file, a task) shared by every process here",
		UsageText: "pickup lock acquire|check|heartbeat|release|list|cleanup|run ...",
		Description: "A lock is a record in <board>/.pickup/locks. Of any number of processes that want one key,\n" +
			"exactly one holds it; different keys are independent. A lock lives as long as its holder's\n" +
			"process: `lock acquire` records the agent or program that ran pickup (see --pid), `lock run`\n" +
			"records itself. A holder that is alive on this host keeps its lock however long it works;\n" +
			"one that has exited loses it at once, and the next acquire takes it over. Holders on other\n" +
			"hosts keep it for --ttl after their last heartbeat.\n\n" +
			"A lock held by someone else exits 3 and names the holder: pick other work and try later,\n" +
			"or wait with --wait DUR (exit 5 when the wait runs out).\n\n" +
			"Examples:\n" +
			"   pickup lock acquire repo:main --wait 5m     (then, when done: pickup lock release repo:main)\n" +
			"   pickup lock run repo:main --wait 5m -- git push\n" +
			"   pickup lock run issue-42 --supersede -- ./answer-issue.sh 42",
		Subcommands: []*ucli.Command{
			r.lockAcquireCommand(),
			r.lockCheckCommand(),
			r.lockHeartbeatCommand(),
			r.lockReleaseCommand(),
			r.lockListCommand(),
			r.lockCleanupCommand(),
			r.lockRunCommand(),
		},
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("unknown lock command %q; run `pickup lock --help`", c.Args().First())
			}
			return ucli.ShowSubcommandHelp(c)
		},
	}
	return cmd
}

// lockKey reads the one KEY argument of a lock command.
func lockKey(c *ucli.Context, name string) (string, error) {
	if c.NArg() != 1 {
		return "", usageError("lock %s needs exactly one KEY, e.g. pickup lock %s repo:main", name, name)
	}
	return checkLockKey(c.Args().First())
}

func checkLockKey(key string) (string, error) {
	if key == "" || len(key) > claim.MaxLockKeyLen {
		return "", usageError("a lock KEY is 1 to %d bytes, e.g. repo:main or issue-42", claim.MaxLockKeyLen)
	}
	return key, nil
}

// locks opens the board's locks and resolves the owner.
func (r *run) locks() (*claim.Locks, string, error) {
	b, err := r.board()
	if err != nil {
		return nil, "", err
	}
	owner, err := r.ownerName()
	if err != nil {
		return nil, "", err
	}
	l := claim.BoardLocks(b)
	claimhook.UseSystem(l, proc.Env{Hostname: r.env.Hostname})
	if err := r.arbitrateLocks(b, l); err != nil {
		return nil, "", err
	}
	return l, owner, nil
}

// lockWait reads --wait: 0 (try once), a duration, or "forever" (-1).
func lockWait(c *ucli.Context) (time.Duration, error) {
	v := c.String("wait")
	if v == "" {
		return 0, nil
	}
	if v == waitForever {
		return -1, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, usageError("--wait %q: give a duration such as 30s or 10m, or forever", v)
	}
	return d, nil
}

func lockTTL(c *ucli.Context) (time.Duration, error) {
	if !c.IsSet("ttl") {
		return claim.DefaultLockTTL, nil
	}
	d := c.Duration("ttl")
	if d <= 0 {
		return 0, usageError("--ttl must be a positive duration such as 10m")
	}
	return d, nil
}

func lockWaitFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "wait", Usage: "wait up to DUR (30s, 10m, forever) for the lock instead of exiting 3 at once; exit 5 if it stays held"}
}

func lockTTLFlag() ucli.Flag {
	return &ucli.DurationFlag{Name: "ttl", Value: claim.DefaultLockTTL,
		Usage: "how long the lock stays valid without a heartbeat if its holder's process cannot be checked (another host); a holder alive on this host keeps it regardless"}
}

// interruptible returns a context that ends at SIGINT or SIGTERM, for a
// command that may wait (wait != 0). One that does not gets a plain
// context: catching signals makes Go start and lock an OS thread, which
// cost a short command about 0.3 ms of its 3, and such a command is as
// safe to stop by a signal's default action as by SIGKILL.
func interruptible(wait time.Duration) (context.Context, context.CancelFunc) {
	if wait == 0 {
		return context.WithCancel(context.Background())
	}
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func (r *run) lockAcquireCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "acquire",
		Usage:     "take the lock on KEY for this owner, for the life of its process",
		UsageText: "pickup lock acquire KEY [--wait DUR] [--ttl DUR] [--json]",
		Description: "The lock is held by the owner (--owner, $PICKUP_OWNER, ...) for as long as the owner's\n" +
			"process lives: the agent or program that ran pickup, past shells (--pid or $PICKUP_PID\n" +
			"name it). Release it with `pickup lock release KEY` when done; if the process exits first,\n" +
			"the lock is free at once. Locks are not reentrant: acquiring a lock you hold exits 3.\n" +
			"Held by someone else: exit 3 naming the holder (pick other work), or with --wait, exit 5\n" +
			"when the wait runs out.\n\n" +
			"Examples:\n   pickup lock acquire repo:main\n   pickup lock acquire repo:main --wait 10m --json",
		Flags: []ucli.Flag{lockWaitFlag(), lockTTLFlag()},
		Action: func(c *ucli.Context) error {
			key, err := lockKey(c, "acquire")
			if err != nil {
				return err
			}
			wait, err := lockWait(c)
			if err != nil {
				return err
			}
			ttl, err := lockTTL(c)
			if err != nil {
				return err
			}
			locks, owner, err := r.locks()
			if err != nil {
				return err
			}
			defer locks.Close()
			p, err := r.invokerProcess()
			if err != nil {
				return err
			}
			ctx, stop := interruptible(wait)
			defer stop()
			claimhook.HoldLocksFor(locks, p) // the lock lives as long as the agent, not this command
			info, err := takeLock(ctx, locks, key, wait, nil,
				claim.WithLockOwner(owner), claim.WithLockTTL(ttl))
			if err != nil {
				return lockFail(err, key, owner, p)
			}
			if r.json {
				return r.printJSON(info)
			}
			r.printf("acquired lock %s as %s (held while %s runs)\n", lockName(key), sanitize(owner), info.Process)
			return nil
		},
	}
}

func (r *run) lockReleaseCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "release",
		Usage:     "release the lock on KEY that this owner holds",
		UsageText: "pickup lock release KEY [--json]",
		Description: "Only the owner that holds a lock releases it: releasing someone else's exits 3 and changes\n" +
			"nothing; releasing a lock that nobody holds exits 4.\n\nExample: pickup lock release repo:main",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "force", Usage: "FOR PEOPLE ONLY, never for AI agents: release the lock whoever holds it (its holder is not told and may still be working)"},
		},
		Action: func(c *ucli.Context) error {
			key, err := lockKey(c, "release")
			if err != nil {
				return err
			}
			locks, owner, err := r.locks()
			if err != nil {
				return err
			}
			info, err := locks.Release(key, owner, c.Bool("force"))
			if err != nil {
				return lockFail(err, key, owner, proc.Process{})
			}
			if r.json {
				return r.printJSON(info)
			}
			if info.Owner != owner {
				r.printf("released lock %s by force; it was held by %s\n", lockName(key), info.Holder())
				return nil
			}
			r.printf("released lock %s\n", lockName(key))
			return nil
		},
	}
}
