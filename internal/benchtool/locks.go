package main

// Measurements of named locks from the command line: `pickup lock acquire`
// and `pickup lock release` as processes, and `pickup heartbeat` (an
// owner's lease) as a process. They register themselves (init below), so
// main.go needs no change.

import (
	"fmt"
	"time"

	"github.com/pickup-dev/pickup/internal/benchtool/benchkit"
)

func init() {
	measurements = append(measurements,
		measurement{"lock-process", func(e *env) (Row, error) { return lockProcess(e, false) }},
		measurement{"lock-process-nosync", func(e *env) (Row, error) { return lockProcess(e, true) }},
		measurement{"heartbeat-process", func(e *env) (Row, error) { return heartbeatProcess(e, false) }},
		measurement{"heartbeat-process-nosync", func(e *env) (Row, error) { return heartbeatProcess(e, true) }},
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
