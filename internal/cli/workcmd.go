package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/lifeline"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

func (r *run) workCommand() *ucli.Command {
	tf := &tagFlags{}
	return &ucli.Command{
		Name:      "work",
		Usage:     "run a command for each session, N at a time",
		UsageText: "pickup work [-j N] [--max-attempts K] [--wait[=DUR]] [--grace DUR] [--tag T]... [--not-tag T]... -- CMD ARGS...",
		Description: "Each worker claims the next session and runs CMD with PICKUP_SESSION_ID,\n" +
			"PICKUP_SESSION_PATH, PICKUP_OWNER and PICKUP_DIR in its environment and every {} in ARGS\n" +
			"replaced by the session's path. Exit 0 moves the session to done/; any other exit puts\n" +
			"it back in todo/ with the attempt counted in its frontmatter (attempts, last_error);\n" +
			"after K failures it is set aside in failed/, where next no longer takes it, until\n" +
			"`pickup requeue ID`. The command may finish or release its session itself (pickup done,\n" +
			"pickup release: it acts as work's owner): work reports that as done or released and\n" +
			"leaves the session there (one it released, this work does not claim again). Inside the\n" +
			"command, `pickup next` answers with its session and claims no second one, so an agent\n" +
			"that follows /pickup works exactly the session it was given. Without --wait, work stops\n" +
			"when nothing is left and exits 0 if every run succeeded, 1 otherwise; with --wait it keeps\n" +
			"serving new sessions.\n" +
			"A command that cannot be started (not found, not executable) is your mistake, not the\n" +
			"session's: work stops claiming at once, gives back what it claimed with no attempt\n" +
			"counted, lets runs already going finish, and exits 2 saying why. (A command that runs\n" +
			"and then exits 127 or 126 itself, a script missing a tool, is an ordinary failure.)\n" +
			"The first SIGINT/SIGTERM/SIGHUP stops claiming, forwards the signal to running commands,\n" +
			"waits --grace, kills what is left and releases unfinished sessions to todo/; a second\n" +
			"one kills at once. Nothing is lost either way. Each command runs in a process group of\n" +
			"its own: whatever it leaves running when it exits is killed before its session moves on,\n" +
			"and if pickup is killed, even by SIGKILL, every command's group is killed with it.\n" +
			"Progress: one live status line on a terminal (busy workers, sessions waiting in todo/,\n" +
			"done, failed, rate), log lines otherwise, and with --json one\n" +
			"event object per line: {\"time\",\"event\",\"id\",\"worker\",\"attempt\",\"error\"} with event\n" +
			"claimed, done, failed, released, set_aside or lost.\n" +
			"--tag T and --not-tag T limit every claim to the sessions that carry T (all of them, if\n" +
			"several) and not T, as for `pickup next`; \"nothing left\" then means nothing that matches.\n\n" +
			"Examples:\n   pickup work -j 4 -- ./run-session.sh {}\n   pickup work -j 2 --wait --max-attempts 3 -- claude -p \"work on the session in {}\"\n" +
			"   pickup work --wait --tag docs -- claude -p \"write the docs the session in {} asks for\"",
		Flags: append([]ucli.Flag{
			&ucli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 1, Usage: "how many sessions at once"},
			&ucli.IntFlag{Name: "max-attempts", Value: claim.DefaultMaxAttempts, Usage: "failures (or reaps) before a session is set aside in failed/ (default: the board's max_attempts, else 3; 0: never)"},
			&ucli.StringFlag{Name: "wait", Usage: "keep serving new sessions (for DUR; --wait alone: until stopped)"},
			&ucli.DurationFlag{Name: "grace", Value: 10 * time.Second, Usage: "how long a stopped command may take to exit before it is killed"},
		}, tf.flags()...),
		Action: func(c *ucli.Context) error { return r.work(c, tf) },
	}
}

// runner starts the commands of a pool and stops them on signals.
type runner struct {
	r     *run
	argv  []string
	path  string // argv[0] looked up in $PATH once, or "" to look it up on each run
	grace time.Duration
	env   []string
	// ll is the watchdog that kills the commands if pickup dies; nil if it
	// could not start.
	ll *lifeline.Lifeline

	mu sync.Mutex
	// sig is the first stop signal, which the commands get; 0 before one.
	sig     syscall.Signal
	running map[*lifeline.Group]bool
}

func (rn *runner) run(ctx context.Context, b *sessions.Board, owner string, s sessions.Session) error {
	if err := ctx.Err(); err != nil {
		return err // told to stop before this run began
	}
	args := make([]string, len(rn.argv))
	for i, a := range rn.argv {
		args[i] = strings.ReplaceAll(a, "{}", s.Path)
	}
	var cmd *exec.Cmd
	if rn.path != "" {
		cmd = exec.Command(rn.path, args[1:]...)
		cmd.Args[0] = args[0] // what the user wrote, as a shell would pass it
	} else {
		cmd = exec.Command(args[0], args[1:]...)
	}
	cmd.Env = append(append([]string{}, rn.env...),
		"PICKUP_SESSION_ID="+s.ID, "PICKUP_SESSION_PATH="+s.Path, "PICKUP_OWNER="+owner, "PICKUP_DIR="+b.Dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	g, err := rn.ll.Start(cmd)
	if err != nil {
		return notStarted(args[0], err)
	}
	rn.mu.Lock()
	rn.running[g] = true
	rn.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		rn.mu.Lock()
		sig := rn.sig
		rn.mu.Unlock()
		if sig == 0 {
			sig = syscall.SIGTERM
		}
		_ = g.Signal(sig)
		grace := time.NewTimer(rn.grace)
		select {
		case err = <-done:
		case <-grace.C:
			_ = g.Signal(syscall.SIGKILL)
			err = <-done
		}
		grace.Stop()
	}
	rn.mu.Lock()
	delete(rn.running, g)
	rn.mu.Unlock()
	// Before the pool hands the session on: nothing the command left
	// behind may go on working on it.
	rn.r.endGroup(g, "work: session "+s.ID)
	if serr := g.StartErr(); serr != nil {
		return notStarted(args[0], serr) // its gate exited 127 or 126, not the command
	}
	return err
}

// signalAll sends sig to the groups of every running command and returns
// them.
func (rn *runner) signalAll(sig syscall.Signal) []*lifeline.Group {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	groups := make([]*lifeline.Group, 0, len(rn.running))
	for g := range rn.running {
		_ = g.Signal(sig)
		groups = append(groups, g)
	}
	return groups
}

// handleSignals stops the pool on the first SIGINT, SIGTERM or SIGHUP,
// kills the commands on the next one, and stops and continues them with
// pickup on SIGTSTP. The commands are in process groups of their own: a
// signal that the terminal sends pickup's group does not reach them, so
// each is passed on. The signals are caught from the moment it returns
// until stop is called.
func (rn *runner) handleSignals(cancel func()) (stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	tstp := make(chan os.Signal, 1)
	signal.Notify(tstp, syscall.SIGTSTP)
	jc := newJobControl()
	quit := make(chan struct{})
	go func() {
		for {
			select {
			case <-quit:
				return
			case <-tstp:
				groups := rn.signalAll(syscall.SIGTSTP)
				jc.stopSelf()
				for _, g := range groups {
					_ = g.Signal(syscall.SIGCONT)
				}
			case s := <-sigs:
				rn.stopSignal(s.(syscall.Signal), cancel)
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		signal.Stop(tstp)
		jc.close()
		close(quit)
	}
}

// stopSignal handles a stop signal: the first cancels the pool, whose runs
// pass it on to their commands; the next kills them.
func (rn *runner) stopSignal(sig syscall.Signal, cancel func()) {
	rn.mu.Lock()
	first := rn.sig == 0
	if first {
		rn.sig = sig
	}
	rn.mu.Unlock()
	if !first {
		rn.signalAll(syscall.SIGKILL)
		return
	}
	fmt.Fprintf(rn.r.env.Stderr, "pickup: %s: stopping; running commands get %s and %s to finish (again to kill now)\n", signalName(sig), signalName(sig), rn.grace)
	cancel()
}

func (r *run) work(c *ucli.Context, tf *tagFlags) error {
	argv := c.Args().Slice()
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	if len(argv) == 0 {
		return usageError("work needs a command: pickup work -j 4 -- CMD ARGS... ({} in ARGS becomes the session's path)")
	}
	if c.Int("jobs") < 1 || c.Int("max-attempts") < 0 {
		return usageError("-j must be at least 1 and --max-attempts at least 0")
	}
	wait, timeout, err := waitFlag(c)
	if err != nil {
		return err
	}
	filter, err := tf.filter()
	if err != nil {
		return err
	}
	// Look the command up in $PATH once, not once per session, and before
	// anything changes: a typo is reported with nothing claimed. $PATH
	// does not change while pickup runs.
	path, err := lookCommand(argv[0])
	if err != nil {
		return err
	}
	cl, err := r.client()
	if err != nil {
		return err
	}
	maxAttempts := c.Int("max-attempts")
	if !c.IsSet("max-attempts") {
		if cfg, err := cl.Board.Config(); err != nil {
			return err
		} else if cfg.MaxAttempts != 0 {
			maxAttempts = max(cfg.MaxAttempts, 0)
		}
	}
	// Started before the lease is taken: the watchdog outlives this
	// process until every command group it watches is empty.
	ll := r.startLifeline("work")
	defer ll.Close()
	// The owner's processes are pickup work itself and its watchdog: the
	// owner is dead, and its sessions handed out again, only once both are
	// gone, so only once nothing that a command started can still run. A
	// dead earlier run of the same owner (killed, crashed) left sessions in
	// doing/<owner>/: they go back to todo/ first, counted as attempts.
	leases := r.leases(cl.Board)
	self := r.procEnv().Self()
	self.Why = "pickup work itself"
	holders := []proc.Process{self}
	if pid := ll.PID(); pid != 0 {
		if w, err := r.procEnv().Lookup(pid); err == nil {
			w.Why = "pickup work's watchdog"
			holders = append(holders, w)
		}
	}
	reapLimit := claim.ReapOptions{MaxAttempts: maxAttempts}
	if maxAttempts == 0 {
		reapLimit.MaxAttempts = -1 // never set aside, as for failures
	}
	taken, err := leases.Ensure(cl.Owner, 0, reapLimit, claimHolders(holders)...)
	r.reportTakenUp(cl.Owner, taken)
	if err != nil {
		return err
	}
	stop, cancel := context.WithCancel(context.Background())
	defer cancel()
	var until time.Time
	if timeout > 0 {
		until = time.Now().Add(timeout)
	}
	rn := &runner{r: r, argv: argv, path: path, grace: c.Duration("grace"), env: os.Environ(), ll: ll, running: map[*lifeline.Group]bool{}}
	defer rn.handleSignals(cancel)()
	go func() { // keep the lease fresh for observers on other hosts
		// On a shared board, also push the owner's heartbeat ref, checked
		// twice per beatEvery so that a push is never a whole period late.
		every := min(time.Minute, beatEvery(r.shared.config())/2)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop.Done():
				return
			case <-t.C:
				_, _ = leases.Heartbeat(cl.Owner, claim.Holder(self))
				r.sharedHeartbeat(cl.Owner, false)
			}
		}
	}()
	prog := newProgress(r, c.Int("jobs"))
	pool := &claim.Pool{
		Client: cl, Jobs: c.Int("jobs"), MaxAttempts: maxAttempts, Wait: wait, Until: until, Filter: filter,
		Run: func(ctx context.Context, _ int, s sessions.Session) error {
			return rn.run(ctx, cl.Board, cl.Owner, s)
		},
		Event: prog.event,
	}
	prog.waiting = pool.Waiting
	sum, err := pool.Serve(stop)
	prog.finish(sum)
	var cs *cannotStartError
	if errors.As(err, &cs) {
		return exitError{code: ExitUsage, err: fmt.Errorf("work: %w; stopped at once, %d session(s) back in todo/ with no attempt counted", err, sum.Released)}
	}
	if err != nil {
		return err
	}
	rn.mu.Lock()
	sig := rn.sig
	rn.mu.Unlock()
	if sig != 0 {
		return exitError{code: 128 + int(sig), err: fmt.Errorf("stopped by %s: %d unfinished session(s) released to todo", signalName(sig), sum.Released), quiet: r.json}
	}
	if sum.Failed > 0 || sum.Lost > 0 {
		return exitError{code: ExitError, err: fmt.Errorf("%d run(s) failed, %d session(s) set aside in failed/, %d claim(s) lost", sum.Failed, sum.SetAside, sum.Lost), quiet: r.json}
	}
	return nil
}

// progress reports a pool's events: JSON lines, a live status line on a
// terminal, or plain log lines.
type progress struct {
	r        *run
	jobs     int
	start    time.Time
	terminal bool
	busy     int
	sum      claim.WorkSummary
	// waiting counts the sessions that wait for the pool (Pool.Waiting);
	// waitText is what the status line last said of them.
	waiting  func() (ready, blocked int, ok bool)
	waitText string
}

func newProgress(r *run, jobs int) *progress {
	f, ok := r.rawEnv().Stderr.(*os.File)
	return &progress{r: r, jobs: jobs, start: time.Now(), terminal: ok && isTerminal(f) && !r.json}
}

func (p *progress) event(ev claim.WorkEvent) {
	switch ev.Event {
	case "claimed":
		p.busy++
		p.sum.Claimed++
	case "done":
		p.busy--
		p.sum.Done++
	case "failed", "set_aside", "released", "lost":
		p.busy--
		if ev.Event != "released" {
			p.sum.Failed++
		}
	}
	switch {
	case p.r.json:
		_ = p.r.printJSON(ev)
	case p.terminal:
		rate := float64(p.sum.Done+p.sum.Failed) / time.Since(p.start).Seconds()
		// The status line's own control sequence goes out raw; its fields
		// are numbers and a validated id.
		fmt.Fprintf(p.r.rawEnv().Stderr, "\r\x1b[Kbusy %d/%d  waiting %s  done %d  failed %d  %.1f/s  last: %s %s",
			p.busy, p.jobs, p.waitingNow(), p.sum.Done, p.sum.Failed, rate, ev.Event, ev.ID)
	default:
		line := fmt.Sprintf("worker %d: %s %s", ev.Worker, ev.Event, ev.ID)
		if ev.Attempt > 1 || ev.Event == "failed" || ev.Event == "set_aside" {
			line += fmt.Sprintf(" (attempt %d)", ev.Attempt)
		}
		if ev.Error != "" {
			line += ": " + sanitize(ev.Error)
		}
		fmt.Fprintln(p.r.env.Stderr, line)
	}
}

// waitingNow says how many sessions wait in todo/ for the pool, as its
// queue last listed them: "12", or "12 (+3 blocked)" when some wait on
// dependencies. While the queue is busy listing, the last figure stands.
func (p *progress) waitingNow() string {
	if p.waiting != nil {
		if ready, blocked, ok := p.waiting(); ok {
			p.waitText = strconv.Itoa(ready)
			if blocked > 0 {
				p.waitText += fmt.Sprintf(" (+%d blocked)", blocked)
			}
		}
	}
	if p.waitText == "" {
		return "?"
	}
	return p.waitText
}

func (p *progress) finish(sum claim.WorkSummary) {
	if p.terminal {
		fmt.Fprintln(p.r.env.Stderr)
	}
	if p.r.json {
		_ = p.r.printJSON(map[string]any{"event": "summary", "summary": sum, "seconds": time.Since(p.start).Seconds()})
		return
	}
	fmt.Fprintf(p.r.env.Stderr, "pickup: work: %d claimed, %d done, %d failed runs, %d set aside, %d released, %d lost in %s\n",
		sum.Claimed, sum.Done, sum.Failed, sum.SetAside, sum.Released, sum.Lost, time.Since(p.start).Round(time.Millisecond))
}
