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
	"time"

	"github.com/pickup-dev/pickup/internal/benchtool/benchkit"
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
// times each, uncontended. The lock's holder is this driver (the process
// that ran pickup), as an agent would be. The target is on each median.
func lockProcess(e *env, noSync bool) (Row, error) {
	const limit = 5 * time.Millisecond
	mode := "fsync"
	if noSync {
		mode = "--no-sync"
	}
	row := Row{
		What:   fmt.Sprintf("pickup lock acquire K, then pickup lock release K, uncontended, %s, %d trials each", mode, e.trials),
		Target: "median <= " + ms(limit) + " each",
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
	var aw, ac, rw, rc []time.Duration
	for i := 0; i < e.trials+3; i++ {
		a, err := runProc(e, acquire...)
		if err != nil {
			return row, err
		}
		r, err := runProc(e, release...)
		if err != nil {
			return row, err
		}
		if i >= 3 { // the first ones warm the binary and the page cache
			aw, ac = append(aw, a.wall), append(ac, a.cpu)
			rw, rc = append(rw, r.wall), append(rc, r.cpu)
		}
	}
	row.Figure = fmt.Sprintf("acquire %s; release %s", spread(aw, ac), spread(rw, rc))
	row.Result = passIf(percentile(aw, 0.5) <= limit && percentile(rw, 0.5) <= limit)
	return row, nil
}

// heartbeatProcess times `pickup heartbeat` (renew this owner's lease) as
// a process, e.trials times. The target is on the median.
func heartbeatProcess(e *env, noSync bool) (Row, error) {
	const limit = 3 * time.Millisecond
	mode := "fsync"
	if noSync {
		mode = "--no-sync"
	}
	row := Row{What: fmt.Sprintf("pickup heartbeat (renew the owner's lease), %s, %d trials", mode, e.trials), Target: "median <= " + ms(limit)}
	b, err := benchkit.NewBoard(e.dir("heartbeat"))
	if err != nil {
		return row, err
	}
	defer e.remove(b.Dir)
	args := []string{"--dir", b.Dir, "--owner", "bench-heartbeat", "heartbeat"}
	if noSync {
		args = append(args, "--no-sync")
	}
	var walls, cpus []time.Duration
	for i := 0; i < e.trials+3; i++ {
		r, err := runProc(e, args...)
		if err != nil {
			return row, err
		}
		if i >= 3 {
			walls, cpus = append(walls, r.wall), append(cpus, r.cpu)
		}
	}
	row.Figure = spread(walls, cpus)
	row.Result = passIf(percentile(walls, 0.5) <= limit)
	return row, nil
}

// hookThrottled times `pickup hook post-tool-use` as a process when its
// heartbeat is throttled (the lease was renewed less than a minute ago):
// what Claude Code runs after nearly every tool use. The hook input comes
// from a file, as Claude Code's pipe would give it. The target is on the
// median.
func hookThrottled(e *env) (Row, error) {
	const limit = 5 * time.Millisecond
	row := Row{What: fmt.Sprintf("pickup hook post-tool-use, throttled (lease renewed < 1 min ago), %d trials", e.trials), Target: "median <= " + ms(limit)}
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
	var walls, cpus []time.Duration
	for i := 0; i < e.trials+3; i++ {
		f, err := os.Open(input)
		if err != nil {
			return row, err
		}
		cmd := exec.Command(e.bin, "--dir", b.Dir, "hook", "post-tool-use")
		cmd.Stdin = f // an *os.File: no copying goroutine
		r, err := runCmd(e, cmd)
		f.Close()
		if err != nil {
			return row, err
		}
		if i >= 3 { // the first one renews the lease, the rest are throttled
			walls, cpus = append(walls, r.wall), append(cpus, r.cpu)
		}
	}
	row.Figure = spread(walls, cpus)
	row.Result = passIf(percentile(walls, 0.5) <= limit)
	return row, nil
}
