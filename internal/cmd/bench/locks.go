package main

// Measurements of named locks from the command line: `pickup lock acquire`
// and `pickup lock release` as processes, and `pickup heartbeat` (an
// owner's lease) as a process. They register themselves (init below), so
// main.go needs no change.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/pickup-dev/pickup/internal/benchkit"
)

func init() {
	measurements = append(measurements,
		measurement{"lock-process", func(e *env) (Row, error) { return lockProcess(e, false) }},
		measurement{"lock-process-nosync", func(e *env) (Row, error) { return lockProcess(e, true) }},
		measurement{"heartbeat-process", func(e *env) (Row, error) { return heartbeatProcess(e, false) }},
		measurement{"heartbeat-process-nosync", func(e *env) (Row, error) { return heartbeatProcess(e, true) }},
		measurement{"hook-throttled", hookThrottled},
	)
}

// lockProcess times `pickup lock acquire K` and then `pickup lock release
// K` as processes (fork, exec, wait: wall time), alternately, e.trials
// times each, uncontended, interleaved with the empty Go program. The
// lock's holder is this driver (the process that ran pickup), as an agent
// would be. No target: the issue sets none for locks as processes; the
// ratios say what they cost.
func lockProcess(e *env, noSync bool) (Row, error) {
	row := Row{
		What:   fmt.Sprintf("pickup lock acquire K, then pickup lock release K, uncontended, %s, %d trials each", syncLabel(noSync), e.trials),
		Result: "INFO",
	}
	b, err := benchkit.NewBoard(e.dir("locks"))
	if err != nil {
		return row, err
	}
	defer e.remove(b.Dir)
	common := []string{"--dir", b.Dir, "--owner", "bench-lock"}
	if noSync {
		common = append(common, "--no-sync")
	}
	acquire := append(append([]string{}, common...), "lock", "acquire", "bench:key")
	release := append(append([]string{}, common...), "lock", "release", "bench:key")
	run, err := interleave(e, 2, func(bin string) ([]procResult, error) {
		a, err := runBin(e, bin, acquire...)
		if err != nil {
			return nil, err
		}
		r, err := runBin(e, bin, release...)
		return []procResult{a, r}, err
	})
	if err != nil {
		return row, err
	}
	row.Figure = e.figure(run, []string{"acquire", "release"})
	return row, nil
}

// heartbeatProcess times `pickup heartbeat` (renew this owner's lease) as
// a process, e.trials times, interleaved with the empty Go program. It is
// what a hook does when its heartbeat is not throttled: the target is the
// hooks' (2 x).
func heartbeatProcess(e *env, noSync bool) (Row, error) {
	const limit = 2
	row := Row{What: fmt.Sprintf("pickup heartbeat (renew the owner's lease), %s, %d trials", syncLabel(noSync), e.trials), Target: ratioTarget(limit)}
	b, err := benchkit.NewBoard(e.dir("heartbeat"))
	if err != nil {
		return row, err
	}
	defer e.remove(b.Dir)
	args := []string{"--dir", b.Dir, "--owner", "bench-heartbeat", "heartbeat"}
	if noSync {
		args = append(args, "--no-sync")
	}
	run, err := interleave(e, 1, func(bin string) ([]procResult, error) {
		r, err := runBin(e, bin, args...)
		return []procResult{r}, err
	})
	if err != nil {
		return row, err
	}
	row.Figure = e.figure(run, []string{""})
	row.Result = ratioResult(run, 1, limit)
	return row, nil
}

// hookThrottled times `pickup hook post-tool-use` as a process when its
// heartbeat is throttled (the lease was renewed less than a minute ago):
// what Claude Code runs after nearly every tool use. The hook input comes
// from a file, as Claude Code's pipe would give it. The target is on the
// ratio of the medians to the empty Go program's, interleaved. fsync is
// on, but a throttled hook writes nothing.
func hookThrottled(e *env) (Row, error) {
	const limit = 2
	row := Row{What: fmt.Sprintf("pickup hook post-tool-use, throttled (lease renewed < 1 min ago), fsync on, %d trials", e.trials), Target: ratioTarget(limit)}
	b, err := benchkit.NewBoard(e.dir("hook"))
	if err != nil {
		return row, err
	}
	defer e.remove(b.Dir)
	input := filepath.Join(b.Dir, "hook-input.json")
	json := fmt.Sprintf(`{"session_id":"bench-hook","hook_event_name":"PostToolUse","cwd":%q,"tool_name":"Bash"}`, b.Dir)
	if err := os.WriteFile(input, []byte(json), 0o644); err != nil {
		return row, err
	}
	run, err := interleave(e, 1, func(bin string) ([]procResult, error) {
		f, err := os.Open(input)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		cmd := exec.Command(bin, "--dir", b.Dir, "hook", "post-tool-use")
		cmd.Stdin = f // an *os.File: no copying goroutine
		r, err := runCmd(e, cmd)
		return []procResult{r}, err
	})
	if err != nil {
		return row, err
	}
	row.Figure = e.figure(run, []string{""})
	row.Result = ratioResult(run, 1, limit)
	return row, nil
}
