package cli

// pickup lock run: hold a lock for the life of a command, heartbeat it,
// forward signals, and --supersede an older run of the same key.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/claimhook"
	"github.com/pickup-dev/pickup/internal/proc"
	ucli "github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"
)

func (r *run) lockRunCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "run",
		Usage:     "run CMD holding the lock on KEY, and release it when CMD exits",
		UsageText: "pickup lock run KEY [--wait DUR] [--supersede] [--grace DUR] [--ttl DUR] -- CMD ARGS...",
		Description: "Takes the lock (exit 3 if held, or 5 after --wait), runs CMD with $PICKUP_LOCK_KEY set,\n" +
			"heartbeats the lock while CMD runs, releases it when CMD exits, and exits with CMD's exit\n" +
			"code (128+N if CMD was killed by signal N). The lock is held by this pickup process, so\n" +
			"if pickup is killed, even by SIGKILL, the lock is free at once, and CMD and every\n" +
			"process it started are killed with it. CMD runs in a process group of its own, which\n" +
			"is killed when CMD exits. SIGINT, SIGTERM and SIGHUP are forwarded to that group, which\n" +
			"gets --grace to exit before it is killed; a second signal kills it at once. In the\n" +
			"foreground of a terminal, CMD gets the terminal, so Ctrl-C and Ctrl-Z reach it directly.\n" +
			"If the lock is taken away while CMD runs (released by force), CMD is stopped the same\n" +
			"way and pickup exits 6.\n" +
			"--supersede: if an older `pickup lock run` of KEY is running, stop it (SIGTERM, then\n" +
			"SIGKILL after --grace), wait for it to exit, and take the lock: the newest run wins. A\n" +
			"lock taken by `pickup lock acquire` is never stopped; it is waited for or reported.\n\n" +
			"Examples:\n   pickup lock run repo:main --wait 10m -- git push\n" +
			"   pickup lock run issue-42 --supersede -- ./answer.sh 42",
		Flags: []ucli.Flag{
			lockWaitFlag(), lockTTLFlag(),
			&ucli.BoolFlag{Name: "supersede", Usage: "stop a running lock run of the same KEY (SIGTERM, SIGKILL after --grace) and take its place"},
			&ucli.DurationFlag{Name: "grace", Value: lockRunGrace, Usage: "how long a stopped command may take to exit before it is killed"},
		},
		Action: r.lockRun,
	}
}

func (r *run) lockRun(c *ucli.Context) error {
	args := c.Args().Slice()
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return usageError("lock run needs a KEY and a command: pickup lock run KEY -- CMD ARGS...")
	}
	key, err := checkLockKey(args[0])
	if err != nil {
		return err
	}
	argv := args[1:]
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	if len(argv) == 0 {
		return usageError("lock run needs a command after the KEY: pickup lock run %s -- CMD ARGS...", lockName(key))
	}
	wait, err := lockWait(c)
	if err != nil {
		return err
	}
	ttl, err := lockTTL(c)
	if err != nil {
		return err
	}
	grace := c.Duration("grace")
	if grace < 0 {
		return usageError("--grace must not be negative")
	}
	locks, owner, err := r.locks()
	if err != nil {
		return err
	}
	defer locks.Close()
	self := proc.Env{Hostname: r.env.Hostname}.Self()

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	// Taking the lock: a signal cancels the wait.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sig os.Signal
	watching := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case sig = <-sigs:
			cancel()
		case <-watching:
		}
	}()
	lr := &lockRunner{r: r, locks: locks, key: key, owner: owner, self: self, ttl: ttl, wait: wait, grace: grace, started: time.Now()}
	info, err := lr.acquire(ctx, c.Bool("supersede"))
	close(watching)
	<-watched
	if err == nil && sig != nil {
		_ = locks.Unlock(key, info.Token)
		err = context.Canceled
	}
	if err != nil {
		if sig != nil {
			return exitError{code: 128 + int(sig.(syscall.Signal)), err: fmt.Errorf("stopped by %s before the command started; nothing ran", signalName(sig))}
		}
		return lockFail(err, key, owner, self)
	}
	return lr.run(info, argv, sigs)
}

// lockRunner is one `pickup lock run`.
type lockRunner struct {
	r          *run
	locks      *claim.Locks
	key, owner string
	self       proc.Process
	ttl, wait  time.Duration
	grace      time.Duration
	// started: when this run began (a run on another machine that
	// took the lock later is newer); stopping: it was superseded from
	// another machine (see lockshared.go).
	started  time.Time
	stopping sync.Once
}

// acquire takes the lock. With supersede, a `pickup lock run` of the key
// that started before this one is stopped first, as often as one is found
// holding the lock; one that started later wins, and this run gives up.
func (lr *lockRunner) acquire(ctx context.Context, supersede bool) (claim.LockInfo, error) {
	var onHeld func(context.Context, claim.LockInfo) (bool, error)
	if supersede {
		onHeld = func(ctx context.Context, h claim.LockInfo) (bool, error) {
			if handled, again, err := lr.supersedeElsewhere(ctx, h); handled {
				return again, err
			}
			if !lr.isLockRun(h) {
				return false, nil
			}
			if newer(proc.Process(h.Process), lr.self) {
				return false, &lockError{fmt.Sprintf("lock %s is held by a newer `pickup lock run`, %s; this older run is superseded and did not run",
					lockName(lr.key), h.Holder()), &claim.LockHeldError{Key: lr.key, Holder: h}}
			}
			return true, lr.stop(ctx, h)
		}
	}
	claimhook.HoldLocksFor(lr.locks, lr.self)
	return takeLock(ctx, lr.locks, lr.key, lr.wait, onHeld,
		claim.WithLockOwner(lr.owner), claim.WithLockTTL(lr.ttl), claim.WithLockRun())
}

// isLockRun reports whether h is held by a running `pickup lock run` on
// this host: only those are ever stopped by --supersede (a lock taken with
// `pickup lock acquire` names the agent's process, which must never get a
// signal from pickup).
func (lr *lockRunner) isLockRun(h claim.LockInfo) bool {
	p := proc.Process(h.Process)
	if h.Corrupt || p.PID <= 0 || p.PID == lr.self.PID || p.Host != lr.self.Host {
		return false
	}
	if (proc.Env{Hostname: lr.r.env.Hostname}).Liveness(p, lr.self) != proc.Alive {
		return false
	}
	return isLockRunCmdline(p.PID)
}

// isLockRunCmdline reads /proc/PID/cmdline: among pickup's arguments
// before any "--", the first subcommand name after "lock" is "run".
// Without /proc it reports false, so that --supersede waits instead of
// signalling a process it cannot identify.
func isLockRunCmdline(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(data) == 0 {
		return false
	}
	args := bytes.Split(bytes.TrimSuffix(data, []byte{0}), []byte{0})
	sawLock := false
	for _, a := range args[1:] {
		switch s := string(a); {
		case s == "--":
			return false
		case !sawLock:
			sawLock = s == "lock"
		case lockSubcommands[s]:
			return s == "run"
		}
	}
	return false
}

var lockSubcommands = map[string]bool{"acquire": true, "check": true, "heartbeat": true, "release": true,
	"list": true, "cleanup": true, "run": true, "help": true, "h": true}

// newer reports whether process a started after process b (both on this
// host and boot); same start tick: the higher pid counts as newer.
func newer(a, b proc.Process) bool {
	if a.Start == 0 || b.Start == 0 {
		return false
	}
	if a.Start != b.Start {
		return a.Start > b.Start
	}
	return a.PID > b.PID
}

// stop ends the `pickup lock run` holding h: SIGTERM, which it forwards to
// its command, then SIGKILL if it is still running after the grace period
// (and a little more, for it to release the lock).
func (lr *lockRunner) stop(ctx context.Context, h claim.LockInfo) error {
	fmt.Fprintf(lr.r.env.Stderr, "pickup: lock run: superseding the `pickup lock run` that holds %s, %s: SIGTERM, then SIGKILL after %s\n",
		lockName(lr.key), h.Holder(), lr.grace)
	pid := h.Process.PID
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("supersede lock %s: stop pid %d: %w", lockName(lr.key), pid, err)
	}
	if lr.awaitExit(ctx, proc.Process(h.Process), lr.grace+time.Second) {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("supersede lock %s: kill pid %d: %w", lockName(lr.key), pid, err)
	}
	if lr.awaitExit(ctx, proc.Process(h.Process), lockKillWait) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("supersede lock %s: pid %d did not exit %s after SIGKILL", lockName(lr.key), pid, lockKillWait)
}

// awaitExit polls until p is no longer alive, for at most d.
func (lr *lockRunner) awaitExit(ctx context.Context, p proc.Process, d time.Duration) bool {
	env := proc.Env{Hostname: lr.r.env.Hostname}
	deadline := time.Now().Add(d)
	for {
		if env.Liveness(p, lr.self) != proc.Alive {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// beat renews the lock, or reports that it is no longer this run's.
func (lr *lockRunner) beat(info claim.LockInfo) error {
	cur, _, err := lr.locks.Check(lr.key)
	if err != nil {
		return nil // cannot tell now; try at the next beat
	}
	if cur.Token != info.Token {
		if cur.Token == "" {
			return fmt.Errorf("lock %s was released by someone else", lockName(lr.key))
		}
		return fmt.Errorf("lock %s was taken away and is now held by %s", lockName(lr.key), cur.Holder())
	}
	lr.stopIfSuperseded(cur)
	if err := lr.locks.Heartbeat(lr.key, lr.owner); err != nil && (errors.Is(err, claim.ErrNotHolder) || errors.Is(err, claim.ErrLockNotHeld)) {
		return fmt.Errorf("lock %s was taken away", lockName(lr.key))
	}
	return nil
}

func signalName(s os.Signal) string {
	if n, ok := s.(syscall.Signal); ok && unix.SignalName(n) != "" {
		return unix.SignalName(n)
	}
	return s.String()
}

// lockBeatEvery is how often lock run renews a lock of the given TTL:
// three times per TTL, at least once a minute, at most ten times a second.
func lockBeatEvery(ttl time.Duration) time.Duration {
	return min(max(ttl/3, 100*time.Millisecond), time.Minute)
}
