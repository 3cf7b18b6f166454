package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

func (r *run) workCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "work",
		Usage:     "run a command for each session, N at a time",
		UsageText: "pickup work [-j N] [--max-attempts K] [--wait[=DUR]] [--grace DUR] -- CMD ARGS...",
		Description: "Each worker claims the next session and runs CMD with PICKUP_SESSION_ID,\n" +
			"PICKUP_SESSION_PATH, PICKUP_OWNER and PICKUP_DIR in its environment and every {} in ARGS\n" +
			"replaced by the session's path. Exit 0 moves the session to done/; any other exit puts\n" +
			"it back in todo/ with the attempt counted in its frontmatter (attempts, last_error);\n" +
			"after K failures it is set aside in failed/, where next no longer takes it, until\n" +
			"`pickup requeue ID`. Without --wait, work stops when nothing is left and exits 0 if\n" +
			"every run succeeded, 1 otherwise; with --wait it keeps serving new sessions.\n" +
			"The first SIGINT/SIGTERM stops claiming, forwards the signal to running commands, waits\n" +
			"--grace, kills what is left and releases unfinished sessions to todo/; a second one\n" +
			"kills at once. Nothing is lost either way.\n" +
			"Progress: one live status line on a terminal, log lines otherwise, and with --json one\n" +
			"event object per line: {\"time\",\"event\",\"id\",\"worker\",\"attempt\",\"error\"} with event\n" +
			"claimed, done, failed, released, set_aside or lost.\n\n" +
			"Examples:\n   pickup work -j 4 -- ./run-session.sh {}\n   pickup work -j 2 --wait --max-attempts 3 -- claude -p \"work on the session in {}\"",
		Flags: []ucli.Flag{
			&ucli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 1, Usage: "how many sessions at once"},
			&ucli.IntFlag{Name: "max-attempts", Value: claim.DefaultMaxAttempts, Usage: "failures (or reaps) before a session is set aside in failed/ (default: the board's max_attempts, else 3; 0: never)"},
			&ucli.StringFlag{Name: "wait", Usage: "keep serving new sessions (for DUR; --wait alone: until stopped)"},
			&ucli.DurationFlag{Name: "grace", Value: 10 * time.Second, Usage: "how long a stopped command may take to exit before it is killed"},
		},
		Action: r.work,
	}
}

// runner starts the commands of a pool and stops them on signals.
type runner struct {
	argv  []string
	path  string // argv[0] looked up in $PATH once, or "" to look it up on each run
	grace time.Duration
	env   []string

	mu  sync.Mutex
	sig os.Signal
	// fromTerminal: sig is a Ctrl-C that the commands got from the
	// terminal too (they are in pickup's process group); they are not sent
	// it again, only killed after grace.
	fromTerminal bool
	running      map[*exec.Cmd]bool
}

func (rn *runner) run(ctx context.Context, b *sessions.Board, owner string, s sessions.Session) error {
	args := make([]string, len(rn.argv))
	for i, a := range rn.argv {
		args[i] = strings.ReplaceAll(a, "{}", s.Path)
	}
	var cmd *exec.Cmd
	if rn.path != "" {
		cmd = exec.CommandContext(ctx, rn.path, args[1:]...)
		cmd.Args[0] = args[0] // what the user wrote, as a shell would pass it
	} else {
		cmd = exec.CommandContext(ctx, args[0], args[1:]...)
	}
	cmd.Env = append(append([]string{}, rn.env...),
		"PICKUP_SESSION_ID="+s.ID, "PICKUP_SESSION_PATH="+s.Path, "PICKUP_OWNER="+owner, "PICKUP_DIR="+b.Dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.Cancel = func() error {
		rn.mu.Lock()
		sig, fromTerminal := rn.sig, rn.fromTerminal
		rn.mu.Unlock()
		if fromTerminal {
			return nil // WaitDelay kills it if it outlives grace
		}
		if sig == nil {
			sig = syscall.SIGTERM
		}
		return cmd.Process.Signal(sig)
	}
	cmd.WaitDelay = rn.grace
	if err := cmd.Start(); err != nil {
		return err
	}
	rn.mu.Lock()
	rn.running[cmd] = true
	rn.mu.Unlock()
	err := cmd.Wait()
	rn.mu.Lock()
	delete(rn.running, cmd)
	rn.mu.Unlock()
	return err
}

func (rn *runner) killAll() {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	for cmd := range rn.running {
		_ = cmd.Process.Kill()
	}
}

func (r *run) work(c *ucli.Context) error {
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
	// The pickup work process itself is the owner's living process. A
	// dead earlier run of the same owner (killed, crashed) left sessions in
	// doing/<owner>/: they go back to todo/ first, counted as attempts.
	leases := r.leases(cl.Board)
	self := r.procEnv().Self()
	reapLimit := claim.ReapOptions{MaxAttempts: maxAttempts}
	if maxAttempts == 0 {
		reapLimit.MaxAttempts = -1 // never set aside, as for failures
	}
	taken, err := leases.Ensure(cl.Owner, 0, reapLimit, self)
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
	rn := &runner{argv: argv, grace: c.Duration("grace"), env: os.Environ(), running: map[*exec.Cmd]bool{}}
	// Look the command up in $PATH once, not once per session; $PATH does
	// not change while pickup runs. A name with a slash is run as it is,
	// and one that is not found (or only in a relative directory of $PATH)
	// is left to each run, which reports the error as the run's failure.
	if name := argv[0]; filepath.Base(name) == name && !strings.Contains(name, "{}") {
		if lp, err := exec.LookPath(name); err == nil && filepath.IsAbs(lp) {
			rn.path = lp
		}
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var interrupted os.Signal
	go func() {
		n := 0
		for sig := range sigs {
			if n++; n == 1 {
				fromTerminal := sig == os.Interrupt && r.env.InForeground != nil && r.env.InForeground()
				rn.mu.Lock()
				rn.sig, interrupted, rn.fromTerminal = sig, sig, fromTerminal
				rn.mu.Unlock()
				if fromTerminal {
					fmt.Fprintf(r.env.Stderr, "pickup: %s: stopping; running commands got it from the terminal too and have %s to finish (again to kill now)\n", sig, rn.grace)
				} else {
					fmt.Fprintf(r.env.Stderr, "pickup: %s: stopping; running commands get %s and %s to finish (again to kill now)\n", sig, sig, rn.grace)
				}
				cancel()
				continue
			}
			rn.killAll()
		}
	}()
	go func() { // keep the lease fresh for observers on other hosts
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-stop.Done():
				return
			case <-t.C:
				_, _ = leases.Heartbeat(cl.Owner, self)
			}
		}
	}()
	prog := newProgress(r, c.Int("jobs"))
	pool := &claim.Pool{
		Client: cl, Jobs: c.Int("jobs"), MaxAttempts: maxAttempts, Wait: wait, Until: until,
		Run: func(ctx context.Context, _ int, s sessions.Session) error {
			return rn.run(ctx, cl.Board, cl.Owner, s)
		},
		Event: prog.event,
	}
	sum, err := pool.Serve(stop)
	prog.finish(sum)
	if err != nil {
		return err
	}
	rn.mu.Lock()
	sig := interrupted
	rn.mu.Unlock()
	if sig != nil {
		code := 128 + int(sig.(syscall.Signal))
		return exitError{code: code, err: fmt.Errorf("stopped by %s: %d unfinished session(s) released to todo", sig, sum.Released), quiet: r.json}
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
}

func newProgress(r *run, jobs int) *progress {
	f, ok := r.env.Stderr.(*os.File)
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
		fmt.Fprintf(p.r.env.Stderr, "\r\x1b[Kbusy %d/%d  done %d  failed %d  %.1f/s  last: %s %s",
			p.busy, p.jobs, p.sum.Done, p.sum.Failed, rate, ev.Event, ev.ID)
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
