package cli

// pickup lock run: hold a lock for the life of a command, heartbeat it,
// forward signals, and --supersede an older run of the same key.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"strconv"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/claim"
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
			"if pickup is killed, even by SIGKILL, the lock is free at once (and on Linux CMD is\n" +
			"killed with it). SIGINT and SIGTERM are forwarded to CMD, which gets --grace to exit\n" +
			"before it is killed; a second signal kills it at once. (Ctrl-C in the terminal reaches\n" +
			"CMD directly and is not forwarded again.) If the lock is taken away while\n" +
			"CMD runs (released by force), CMD is stopped the same way and pickup exits 6.\n" +
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
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
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
	lr := &lockRunner{r: r, locks: locks, key: key, owner: owner, self: self, ttl: ttl, wait: wait, grace: grace}
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
}

// acquire takes the lock. With supersede, a `pickup lock run` of the key
// that started before this one is stopped first, as often as one is found
// holding the lock; one that started later wins, and this run gives up.
func (lr *lockRunner) acquire(ctx context.Context, supersede bool) (claim.LockInfo, error) {
	var onHeld func(context.Context, claim.LockInfo) (bool, error)
	if supersede {
		onHeld = func(ctx context.Context, h claim.LockInfo) (bool, error) {
			if !lr.isLockRun(h) {
				return false, nil
			}
			if newer(h.Process, lr.self) {
				return false, &lockError{fmt.Sprintf("lock %s is held by a newer `pickup lock run`, %s; this older run is superseded and did not run",
					lockName(lr.key), h.Holder()), &claim.LockHeldError{Key: lr.key, Holder: h}}
			}
			return true, lr.stop(ctx, h)
		}
	}
	return takeLock(ctx, lr.locks, lr.key, lr.wait, onHeld,
		claim.WithLockOwner(lr.owner), claim.WithLockProcess(lr.self), claim.WithLockTTL(lr.ttl))
}

// isLockRun reports whether h is held by a running `pickup lock run` on
// this host: only those are ever stopped by --supersede (a lock taken with
// `pickup lock acquire` names the agent's process, which must never get a
// signal from pickup).
func (lr *lockRunner) isLockRun(h claim.LockInfo) bool {
	p := h.Process
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
	if lr.awaitExit(ctx, h.Process, lr.grace+time.Second) {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("supersede lock %s: kill pid %d: %w", lockName(lr.key), pid, err)
	}
	if lr.awaitExit(ctx, h.Process, lockKillWait) {
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

// run runs argv holding the lock info, then releases it.
func (lr *lockRunner) run(info claim.LockInfo, argv []string, sigs <-chan os.Signal) error {
	r := lr.r
	release := func() error {
		err := lr.locks.Unlock(lr.key, info.Token)
		if err != nil && (errors.Is(err, claim.ErrNotHolder) || errors.Is(err, claim.ErrLockNotHeld)) {
			return nil // reported as lost by the heartbeat, or lost at the very end
		}
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), envLockKey+"="+lr.key)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r.env.Stdin, r.env.Stdout, r.env.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	setParentDeathSignal(cmd.SysProcAttr, syscall.SIGKILL)
	if err := cmd.Start(); err != nil {
		_ = release()
		code := 126
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return exitError{code: code, err: fmt.Errorf("lock run: %w", err)}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	hb := time.NewTicker(lockBeatEvery(lr.ttl))
	defer hb.Stop()
	var stopping bool
	var kill <-chan time.Time
	var lost error
	stopCmd := func(s os.Signal, why string) {
		if stopping {
			_ = cmd.Process.Kill()
			return
		}
		stopping = true
		kill = time.After(lr.grace)
		if s == os.Interrupt && r.env.InForeground != nil && r.env.InForeground() {
			// Ctrl-C in the terminal: the command is in pickup's process
			// group and got this SIGINT from the terminal already. A
			// second one would tell many programs to quit at once.
			fmt.Fprintf(r.env.Stderr, "pickup: lock run: %s: %s got it from the terminal too; killing it after %s (signal again to kill now)\n", why, sanitize(argv[0]), lr.grace)
			return
		}
		fmt.Fprintf(r.env.Stderr, "pickup: lock run: %s: sending %s to %s, killing it after %s (signal again to kill now)\n", why, signalName(s), sanitize(argv[0]), lr.grace)
		_ = cmd.Process.Signal(s)
	}
	var waitErr error
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case s := <-sigs:
			stopCmd(s, signalName(s))
		case <-kill:
			_ = cmd.Process.Kill()
		case <-hb.C:
			if lost != nil {
				continue
			}
			if err := lr.beat(info); err != nil {
				lost = err
				stopCmd(syscall.SIGTERM, "lock "+lockName(lr.key)+" was taken away")
			}
		}
	}
	relErr := release()
	if lost != nil {
		return exitError{code: ExitClaimLost, err: fmt.Errorf("lock run: %w; %s was stopped", lost, sanitize(argv[0]))}
	}
	code := 0
	if st := cmd.ProcessState; st != nil {
		code = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	} else if waitErr != nil {
		return waitErr
	}
	if relErr != nil {
		fmt.Fprintf(r.env.Stderr, "pickup: lock run: release lock %s: %v\n", lockName(lr.key), relErr)
		if code == 0 {
			code = ExitError
		}
	}
	if code != 0 {
		return exitError{code: code, err: fmt.Errorf("%s exited %d", sanitize(argv[0]), code), quiet: true}
	}
	return nil
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

// setParentDeathSignal asks the kernel to send sig to the command when
// pickup dies (Linux's PR_SET_PDEATHSIG), so that a SIGKILLed `lock run`
// cannot leave its command running unprotected by the lock it lost. Other
// systems have no such field and are left alone.
func setParentDeathSignal(attr *syscall.SysProcAttr, sig syscall.Signal) {
	f := reflect.ValueOf(attr).Elem().FieldByName("Pdeathsig")
	if f.IsValid() && f.CanSet() && f.Type() == reflect.TypeOf(sig) {
		f.Set(reflect.ValueOf(sig))
	}
}
