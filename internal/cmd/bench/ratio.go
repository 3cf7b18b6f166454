package main

// Process times as multiples of an empty Go program. A process's wall time
// on a shared machine moves with the load by more than the differences worth
// measuring, so every process row interleaves its trials with runs of the
// empty Go program (gofloor): round i runs the floor once, then each step of
// the trial once for each binary (-bin, and -base when given). The ratio of
// the medians is then taken over the same seconds of the same machine.

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// warmRounds are run untimed first: they load the binaries and the board
// into the page cache and warm the board's listing cache.
const warmRounds = 3

// series is the wall and CPU times of one step over the trials.
type series struct {
	walls, cpus []time.Duration
}

func (s *series) add(r procResult) {
	s.walls, s.cpus = append(s.walls, r.wall), append(s.cpus, r.cpu)
}

func (s series) median() time.Duration {
	w := slices.Sorted(slices.Values(s.walls))
	return percentile(w, 0.5)
}

// binaries are the pickup binaries a process row times: -bin, then -base.
func (e *env) binaries() []string {
	if e.base == "" {
		return []string{e.bin}
	}
	return []string{e.bin, e.base}
}

// runBin runs the pickup binary bin with args (see runProc).
func runBin(e *env, bin string, args ...string) (procResult, error) {
	return runCmd(e, exec.Command(bin, args...))
}

// trialFunc runs one trial of a row's steps with one binary and returns one
// result per step, in the row's step order.
type trialFunc func(bin string) ([]procResult, error)

// ratioRun is what interleaved trials measured: the floor, and per binary
// one series per step.
type ratioRun struct {
	floor series
	link  series     // the linked floor (-link-floor), if given
	steps [][]series // [binary][step]
}

// interleave runs warmRounds+e.trials rounds of: the Go floor, then trial
// for each binary. Without -go-floor there is no floor and no ratio.
func interleave(e *env, steps int, trial trialFunc) (ratioRun, error) {
	bins := e.binaries()
	run := ratioRun{steps: make([][]series, len(bins))}
	for b := range bins {
		run.steps[b] = make([]series, steps)
	}
	floors := []struct {
		bin string
		s   *series
	}{{e.goFloor, &run.floor}, {e.linkFloor, &run.link}}
	for i := 0; i < warmRounds+e.trials; i++ {
		for _, f := range floors {
			if f.bin == "" {
				continue
			}
			r, err := runCmd(e, exec.Command(f.bin))
			if err != nil {
				return run, err
			}
			if i >= warmRounds {
				f.s.add(r)
			}
		}
		for b, bin := range bins {
			rs, err := trial(bin)
			if err != nil {
				return run, err
			}
			if len(rs) != steps {
				return run, fmt.Errorf("trial returned %d results, want %d", len(rs), steps)
			}
			if i >= warmRounds {
				for s, r := range rs {
					run.steps[b][s].add(r)
				}
			}
		}
	}
	return run, nil
}

// ratio is step s of binary b's median over the floor's median, or 0
// without a floor.
func (run ratioRun) ratio(b, s int) float64 {
	if len(run.floor.walls) == 0 {
		return 0
	}
	return float64(run.steps[b][s].median()) / float64(run.floor.median())
}

// figure formats the run: per binary and step "name median = R x go floor
// (p90, cpu)", then the floor itself.
func (e *env) figure(run ratioRun, names []string) string {
	var parts []string
	for b, bin := range e.binaries() {
		var steps []string
		for s, name := range names {
			x := run.steps[b][s]
			f := spread(slices.Clone(x.walls), slices.Clone(x.cpus))
			if r := run.ratio(b, s); r > 0 {
				lf := ""
				if len(run.link.walls) > 0 {
					lf = fmt.Sprintf(" = %.2f x linked floor", float64(x.median())/float64(run.link.median()))
				}
				f = fmt.Sprintf("%.2f x go floor%s, %s", r, lf, f)
			}
			steps = append(steps, strings.TrimSpace(name+" "+f))
		}
		label := ""
		if len(e.binaries()) > 1 {
			label = filepath.Base(bin) + ": "
			if b == 1 {
				label = "base " + label
			}
		}
		parts = append(parts, label+strings.Join(steps, "; "))
	}
	if len(run.floor.walls) > 0 {
		parts = append(parts, "go floor (empty Go program, interleaved) "+spread(slices.Clone(run.floor.walls), slices.Clone(run.floor.cpus)))
	}
	if len(run.link.walls) > 0 {
		parts = append(parts, fmt.Sprintf("linked floor (pickup's packages, exits in main, interleaved: %.2f x go floor) ", float64(run.link.median())/float64(max(run.floor.median(), 1)))+spread(slices.Clone(run.link.walls), slices.Clone(run.link.cpus)))
	}
	return strings.Join(parts, " | ")
}

// ratioResult is PASS if every step of -bin is at most limit times the
// floor, INFO without a floor.
func ratioResult(run ratioRun, steps int, limit float64) string {
	if len(run.floor.walls) == 0 {
		return "INFO"
	}
	for s := 0; s < steps; s++ {
		if run.ratio(0, s) > limit {
			return "MISS"
		}
	}
	return "PASS"
}

func ratioTarget(limit float64) string { return fmt.Sprintf("median <= %.1f x go floor", limit) }

func syncLabel(noSync bool) string {
	if noSync {
		return "fsync off (--no-sync)"
	}
	return "fsync on"
}
