package userways

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A way is one way users start pickup: the files it needs from testdata and
// how to run them. Every way's workers write "<worker> <id>" to claims for
// each session they are handed and the failures of done to errors, and stop
// after at most 3 claims per session (MAX) so that a broken pickup fails
// the test quickly instead of looping.
type way struct {
	name string
	// seed is how many sessions the board starts with; sessions how many
	// the way must drain (more when its script creates some).
	seed, sessions int
	files          []string
	// run starts the way in the board's work directory and returns once
	// all of its workers have finished.
	run func(ctx context.Context, b *board, max int) error
}

// secondary is the session count of every way but the script:
// enough for dozens of overlapping claims per worker, small enough for CI.
const secondary = 150

var ways = []way{
	{
		// The script, run as the user did: ./drain.sh, executable
		// with a #!/bin/bash line, 8 background subshells, a command
		// substitution around a pipeline into jq. The issue demands
		// 400 claims of 400 sessions, 0 exit 6, 0 reaps.
		name: "script", seed: 400, sessions: 400, files: []string{"drain.sh"},
		run: func(ctx context.Context, b *board, max int) error {
			return b.run(ctx, []string{"MAX=" + strconv.Itoa(max)}, "./drain.sh")
		},
	},
	{
		// xargs -P 8, each step a `sh -c` with an owner of its own.
		name: "xargs-owner-per-step", seed: secondary, sessions: secondary, files: []string{"xargs.sh"},
		run: func(ctx context.Context, b *board, max int) error {
			return b.run(ctx, []string{"N=" + strconv.Itoa(secondary), "OWNER=job"}, "./xargs.sh")
		},
	},
	{
		// xargs -P 8, every step the same owner.
		name: "xargs-shared-owner", seed: secondary, sessions: secondary, files: []string{"xargs.sh"},
		run: func(ctx context.Context, b *board, max int) error {
			return b.run(ctx, []string{"N=" + strconv.Itoa(secondary), "OWNER=xargs"}, "./xargs.sh")
		},
	},
	{
		// make -j 8: 8 targets whose recipes loop next/done.
		name: "make", seed: secondary, sessions: secondary, files: []string{"Makefile"},
		run: func(ctx context.Context, b *board, max int) error {
			return b.run(ctx, nil, "make", "-j", "8", "MAX="+strconv.Itoa(max))
		},
	},
	{
		// A Python program whose ThreadPoolExecutor workers run pickup
		// with subprocess.run.
		name: "python-threads", seed: secondary, sessions: secondary, files: []string{"drain.py"},
		run: func(ctx context.Context, b *board, max int) error {
			return b.run(ctx, []string{"MAX=" + strconv.Itoa(max)}, "./drain.py", "threads")
		},
	},
	{
		// The same with a multiprocessing.Pool: pickup's parent is a pool
		// worker process.
		name: "python-processes", seed: secondary, sessions: secondary, files: []string{"drain.py"},
		run: func(ctx context.Context, b *board, max int) error {
			return b.run(ctx, []string{"MAX=" + strconv.Itoa(max)}, "./drain.py", "processes")
		},
	},
	{
		// A script starts 8 loops with `nohup ./loop.sh wN &` and exits:
		// the loops outlive it.
		name: "nohup", seed: secondary, sessions: secondary, files: []string{"nohup.sh", "loop.sh"},
		run: func(ctx context.Context, b *board, max int) error {
			return b.detached(ctx, max, "./nohup.sh")
		},
	},
	{
		// A script starts 8 loops with `setsid ./loop.sh wN &` and exits:
		// each loop leads a session of its own and outlives the script.
		name: "setsid", seed: secondary, sessions: secondary, files: []string{"setsid.sh", "loop.sh"},
		run: func(ctx context.Context, b *board, max int) error {
			return b.detached(ctx, max, "./setsid.sh")
		},
	},
	{
		// 4 `pickup next --wait=30s --json > outN &` waiters, then 4 new
		// sessions one by one: 4 distinct sessions, one per waiter.
		name: "wait", sessions: 4, files: []string{"wait.sh"},
		run: func(ctx context.Context, b *board, max int) error {
			return b.run(ctx, nil, "./wait.sh")
		},
	},
	{
		// The same, each waiter in a `{ pickup ... next --wait; echo $? > rcN; } &`
		// group, as a script that checks the waiters' exit codes has it.
		name: "wait-exit-codes", sessions: 4, files: []string{"wait.sh"},
		run: func(ctx context.Context, b *board, max int) error {
			return b.run(ctx, []string{"RECORD=1"}, "./wait.sh")
		},
	},
}

// TestWays drains a board each way users start pickup and checks that no
// live worker's claim was reaped: every session handed out exactly once and
// finished by its worker.
func TestWays(t *testing.T) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			ctx := testContext(t)
			b := newBoard(t)
			b.seed(ctx, w.seed)
			b.install(w.files...)
			// The files every worker appends to exist from the start (make
			// and Python read claims before anything is written to it).
			for _, name := range []string{"claims", "errors"} {
				if err := os.WriteFile(filepath.Join(b.work, name), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			if err := w.run(ctx, b, 3*w.sessions); err != nil {
				t.Error(err)
			}
			b.check(b.outcome(), w.sessions, time.Since(start))
		})
	}
}

// run runs a script or program in the work directory with env added to the
// children's environment and returns when it exits; its output goes to the
// file "output", shown if it fails.
func (b *board) run(ctx context.Context, env []string, name string, args ...string) error {
	cmd := b.command(ctx, append([]string{name}, args...)...)
	cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], env...)
	out, err := os.Create(filepath.Join(b.work, "output"))
	if err != nil {
		return err
	}
	defer out.Close()
	// A file, not a pipe: background children that keep it open do not
	// hold up Wait.
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("%s did not finish in time: %v", name, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", name, err, tail(b.lines("output"), 20))
	}
	return nil
}

// detached runs a launcher script that starts 8 loops and exits at once,
// then waits for the 8 loops to write their names to finished.
func (b *board) detached(ctx context.Context, max int, launcher string) error {
	if err := b.run(ctx, []string{"MAX=" + strconv.Itoa(max)}, launcher); err != nil {
		return err
	}
	const loops = 8
	for {
		n := len(b.lines("finished"))
		if n >= loops {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d loops started by %s finished in time", n, loops, launcher)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func tail(lines []string, n int) string {
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
