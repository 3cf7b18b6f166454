package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/benchkit"
	"github.com/pickup-dev/pickup/internal/benchkit/drain"
	"github.com/pickup-dev/pickup/sessions"
)

// --- 0. the machine ---------------------------------------------------------

// syscallFloor says what a system call costs on this machine (a virtual
// machine may charge microseconds), to read the other figures by: a
// getppid(2), and an lstat(2) of a session file with a warm dentry cache.
func syscallFloor(e *env) (Row, error) {
	row := Row{What: "system call cost: getppid, lstat of a session (1,000 files, warm)", Result: "INFO"}
	const n = 200000
	t0 := time.Now()
	for i := 0; i < n; i++ {
		syscall.Getppid()
	}
	getppid := time.Since(t0) / n
	b, err := benchkit.NewBoard(e.dir("syscalls"))
	if err != nil {
		return row, err
	}
	defer e.remove(b.Dir)
	ids, err := benchkit.Fill(b, sessions.Todo, "", 0, 1000)
	if err != nil {
		return row, err
	}
	paths := make([]string, len(ids))
	for i, id := range ids {
		paths[i] = b.Path(sessions.Todo, "", id)
	}
	var st syscall.Stat_t
	t0 = time.Now()
	for r := 0; r < 50; r++ {
		for _, p := range paths {
			if err := syscall.Lstat(p, &st); err != nil {
				return row, err
			}
		}
	}
	lstat := time.Since(t0) / time.Duration(50*len(paths))
	row.Figure = fmt.Sprintf("getppid %s, lstat %s", us(getppid), us(lstat))
	return row, nil
}

// --- 1. the drain ---------------------------------------------------------

// drainPair measures the floor and the library drain on two boards of n
// sessions written the same way; the library board's listing cache is
// warmed by one listing before the clock starts (as any board that has been
// listed once has it).
// drainFunc is drain.Library or drain.Shared.
type drainFunc func(ctx context.Context, b *sessions.Board, workers int, snapshot time.Duration) (drain.Result, error)

func drainPair(e *env, n int, snapshot time.Duration, library drainFunc) (lib, floor drain.Result, err error) {
	fb, err := benchkit.NewBoard(e.dir("floor"))
	if err != nil {
		return
	}
	ids, err := benchkit.Fill(fb, sessions.Todo, "", 0, n)
	if err != nil {
		return
	}
	lb, err := benchkit.NewBoard(e.dir("drain"))
	if err != nil {
		return
	}
	if _, err = benchkit.Fill(lb, sessions.Todo, "", 0, n); err != nil {
		return
	}
	if _, err = lb.ListState(sessions.Todo, false); err != nil { // warm the cache
		return
	}
	if floor, err = drain.Floor(fb, ids, e.workers); err != nil {
		return
	}
	lib, err = library(context.Background(), lb, e.workers, snapshot)
	e.remove(fb.Dir)
	e.remove(lb.Dir)
	return
}

func drainSnapshot(e *env) (Row, error) {
	row := Row{
		What:   fmt.Sprintf("drain %d, %d goroutines, Queue{Snapshot: %s}, fsync off (NoSync)", e.drainN, e.workers, e.snapshot),
		Target: ">= 0.50 x floor",
	}
	lib, floor, err := drainPair(e, e.drainN, e.snapshot, drain.Library)
	if err != nil {
		return row, err
	}
	ratio := lib.Rate() / floor.Rate()
	// What stops the library short of the raw floor: the steps a claim
	// takes besides its rename, added one at a time by hand in the same
	// run, each on a board of its own written the same way.
	ladder := []drain.Work{{Line: true}, {Line: true, Guard: true}, {Line: true, Guard: true, Fresh: true}}
	rungs := make([]string, len(ladder))
	var whole drain.Result
	for i, w := range ladder {
		rb, err := benchkit.NewBoard(e.dir(fmt.Sprintf("floor%d", i+1)))
		if err != nil {
			return row, err
		}
		ids, err := benchkit.Fill(rb, sessions.Todo, "", 0, e.drainN)
		if err != nil {
			return row, err
		}
		r, err := drain.FloorWith(rb, ids, e.workers, w)
		e.remove(rb.Dir)
		if err != nil {
			return row, err
		}
		rungs[i] = fmt.Sprintf("%s %s/s = %.2f x floor", w, count(r.Rate()), r.Rate()/floor.Rate())
		whole = r
	}
	row.Figure = fmt.Sprintf("%.2f x floor (library %s claims/s in %s, cpu %s; raw rename floor %s/s in %s, cpu %s); "+
		"by hand: %s; library %.2f x the last (cpu %.2f x)",
		ratio, count(lib.Rate()), ms(lib.Elapsed), ms(lib.CPU), count(floor.Rate()), ms(floor.Elapsed), ms(floor.CPU),
		strings.Join(rungs, "; "), lib.Rate()/whole.Rate(), float64(whole.CPU)/float64(lib.CPU))
	row.Result = passIf(ratio >= 0.5)
	return row, nil
}

// drainPlain shows why Queue's snapshot exists and what sharing one gives,
// on a board of a smaller size: the same drain with Client.Next, which
// lists todo/ on every call; with a Queue each (the drain row); and with
// one Queue that the goroutines share, as a pool's workers do.
func drainPlain(e *env) (Row, error) {
	row := Row{What: fmt.Sprintf("drain %d, %d goroutines: plain Client.Next, a Queue each, one shared Queue; fsync off (NoSync)", e.plainN, e.workers), Result: "INFO"}
	var figures []string
	for _, d := range []struct {
		name     string
		snapshot time.Duration
		library  drainFunc
	}{
		{"Client.Next", 0, drain.Library},
		{"Queue each", e.snapshot, drain.Library},
		{"shared Queue", e.snapshot, drain.Shared},
	} {
		lib, floor, err := drainPair(e, e.plainN, d.snapshot, d.library)
		if err != nil {
			return row, err
		}
		figures = append(figures, fmt.Sprintf("%s %s claims/s (%.2f x floor %s/s)", d.name, count(lib.Rate()), lib.Rate()/floor.Rate(), count(floor.Rate())))
	}
	row.Figure = strings.Join(figures, "; ")
	return row, nil
}

// --- 2. pickup next as a process -------------------------------------------

// execFloor times what any process costs here, as the floor under the
// `pickup next` figures: fork+exec+wait of /bin/true; of an empty Go
// program (the Go runtime's own start-up); and of this driver re-run so
// that it exits as soon as main starts: the Go runtime and the init of every
// package pickup links, doing nothing.
func execFloor(e *env) (Row, error) {
	row := Row{What: fmt.Sprintf("process floor, %d trials each: /bin/true; an empty Go program; a Go binary linking pickup's packages, exiting in main", e.trials), Result: "INFO"}
	self, err := os.Executable()
	if err != nil {
		return row, err
	}
	series := []func() *exec.Cmd{func() *exec.Cmd { return exec.Command("/bin/true") }}
	if e.goFloor != "" {
		series = append(series, func() *exec.Cmd { return exec.Command(e.goFloor) })
	}
	series = append(series, func() *exec.Cmd {
		if e.linkFloor != "" {
			return exec.Command(e.linkFloor)
		}
		c := exec.Command(self)
		c.Env = append(os.Environ(), noopEnv+"=1")
		return c
	})
	var figs []string
	for _, mk := range series {
		walls := make([]time.Duration, 0, e.trials)
		cpus := make([]time.Duration, 0, e.trials)
		for i := 0; i < e.trials+3; i++ {
			r, err := runCmd(e, mk())
			if err != nil {
				return row, err
			}
			if i >= 3 {
				walls, cpus = append(walls, r.wall), append(cpus, r.cpu)
			}
		}
		figs = append(figs, fmt.Sprintf("%s: %s", filepath.Base(mk().Path), spread(walls, cpus)))
	}
	row.Figure = strings.Join(figs, "; ")
	return row, nil
}

// spread is "median M, p90 P, p99 Q (min N, cpu median C)" of sorted-in-place walls.
func spread(walls, cpus []time.Duration) string {
	slices.Sort(walls)
	slices.Sort(cpus)
	return fmt.Sprintf("median %s, p90 %s, p99 %s (min %s; cpu median %s)",
		ms(percentile(walls, 0.5)), ms(percentile(walls, 0.9)), ms(percentile(walls, 0.99)), ms(walls[0]), ms(percentile(cpus, 0.5)))
}

// --- 2b. pickup next as a process -------------------------------------------

// nextProcess times `pickup --dir B --owner o next` as a process (fork, exec,
// wait: wall time) on a board that holds n todo sessions at every trial:
// after each trial the claimed session is released with the library,
// untimed. Trials are interleaved with runs of the empty Go program, and the
// target is on the ratio of the medians.
func nextProcess(e *env, n int, noSync bool, limit float64) (Row, error) {
	row := Row{What: fmt.Sprintf("pickup next, %d todo, %s, %d trials", n, syncLabel(noSync), e.trials), Target: ratioTarget(limit)}
	b, err := benchkit.NewBoard(e.dir(fmt.Sprintf("next-%d", n)))
	if err != nil {
		return row, err
	}
	defer e.remove(b.Dir)
	if _, err := benchkit.Fill(b, sessions.Todo, "", 0, n); err != nil {
		return row, err
	}
	const owner = "bench-next"
	c, err := claim.New(b, owner)
	if err != nil {
		return row, err
	}
	args := []string{"--dir", b.Dir, "--owner", owner, "next"}
	if noSync {
		args = append(args, "--no-sync")
	}
	// With fsync on, the least a durable claim costs in a process: the
	// linked floor plus a rename and the claim's three fsyncs, timed in the
	// same rounds (linkfloor claim-fsyncs).
	var durable series
	durableDir := ""
	if !noSync && e.linkFloor != "" {
		durableDir = e.dir("durable-floor")
		defer e.remove(durableDir)
		for _, d := range []string{"todo", "doing"} {
			if err := os.MkdirAll(filepath.Join(durableDir, d), 0o755); err != nil {
				return row, err
			}
		}
		if err := os.WriteFile(filepath.Join(durableDir, "todo", "s.md"), []byte("---\nid: s\n---\n"), 0o644); err != nil {
			return row, err
		}
	}
	rounds := 0
	run, err := interleave(e, 1, func(bin string) ([]procResult, error) {
		r, err := runBin(e, bin, args...)
		if err != nil {
			return nil, err
		}
		if durableDir != "" && bin == e.bin {
			d, err := runCmd(e, exec.Command(e.linkFloor, "claim-fsyncs", durableDir))
			if err != nil {
				return nil, err
			}
			if rounds++; rounds > warmRounds {
				durable.add(d)
			}
		}
		held, err := b.ListOwner(owner)
		if err != nil {
			return nil, err
		}
		if len(held) != 1 {
			return nil, fmt.Errorf("after pickup next the owner holds %d sessions", len(held))
		}
		for _, s := range held {
			if _, err := c.Release(context.Background(), s.ID); err != nil {
				return nil, err
			}
		}
		return []procResult{r}, nil
	})
	if err != nil {
		return row, err
	}
	row.Figure = e.figure(run, []string{""})
	if len(durable.walls) > 0 && len(run.floor.walls) > 0 {
		row.Figure += fmt.Sprintf(" | durable floor (the linked floor plus a rename and the three fsyncs of a claim, interleaved: %.2f x go floor) %s",
			float64(durable.median())/float64(run.floor.median()), spread(slices.Clone(durable.walls), slices.Clone(durable.cpus)))
	}
	row.Result = ratioResult(run, 1, limit)
	return row, nil
}

// --- 3. pickup list of a big board ----------------------------------------

// listBoard is built once and shared by the list rows: listTodo sessions in
// todo/, the rest of listN in done/.
func (e *env) bigListBoard() (string, error) {
	if e.listBoard != "" {
		return e.listBoard, nil
	}
	t0 := time.Now()
	b, err := benchkit.NewBoard(e.dir(fmt.Sprintf("list-%d", e.listN)))
	if err != nil {
		return "", err
	}
	if _, err := benchkit.Fill(b, sessions.Todo, "", 0, e.listTodo); err != nil {
		return "", err
	}
	if _, err := benchkit.Fill(b, sessions.Done, "", e.listTodo, e.listN-e.listTodo); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, " (wrote %d sessions in %.1fs)", e.listN, time.Since(t0).Seconds())
	e.listBoard = b.Dir
	return b.Dir, nil
}

// listProcess times `pickup list` (with --json if asJSON) of the big board,
// output to /dev/null, and reads the child's peak RSS. cold deletes
// <board>/.pickup/cache before each run (the OS page cache stays warm); warm
// runs once untimed first so that the cache is there. With -base, that
// binary is timed the same way on the same board, its runs alternating
// with -bin's, so that both see the same machine: the figure then gives
// both and their ratio.
func listProcess(e *env, asJSON, cold bool) (Row, error) {
	limit, memLimitKiB := 500*time.Millisecond, int64(200<<10)
	kind := "warm cache"
	if cold {
		limit, kind = time.Second, "cold cache"
	}
	cmdName := "list"
	if asJSON {
		cmdName = "list --json"
	}
	row := Row{
		What:   fmt.Sprintf("pickup %s, %d sessions (%d todo, %d done), %s; fsync plays no part (list only reads)", cmdName, e.listN, e.listTodo, e.listN-e.listTodo, kind),
		Target: fmt.Sprintf("<= %s, <= %d MiB", ms(limit), memLimitKiB>>10),
	}
	dir, err := e.bigListBoard()
	if err != nil {
		return row, err
	}
	args := []string{"--dir", dir, "list"}
	if asJSON {
		args = append(args, "--json")
	}
	cache := filepath.Join(dir, sessions.RuntimeDirName, "cache")
	bins := []string{e.bin}
	if e.base != "" {
		bins = append(bins, e.base)
	}
	runBin := func(bin string) (procResult, error) { return runCmd(e, exec.Command(bin, args...)) }
	runs := e.listRuns
	if cold {
		runs = e.coldRuns
	}
	walls := make([][]time.Duration, len(bins))
	cpus := make([][]time.Duration, len(bins))
	for i := 0; i < runs; i++ {
		for k, bin := range bins {
			// Cold: no cache. Warm: the cache this binary writes (the
			// other's may differ), by an untimed run first.
			if err := os.RemoveAll(cache); err != nil {
				return row, err
			}
			if !cold {
				if _, err := runBin(bin); err != nil {
					return row, err
				}
			}
			r, err := runBin(bin)
			if err != nil {
				return row, err
			}
			walls[k], cpus[k] = append(walls[k], r.wall), append(cpus[k], r.cpu)
		}
	}
	var figs []string
	var medians []time.Duration
	result := "PASS"
	for k, bin := range bins {
		if err := os.RemoveAll(cache); err != nil {
			return row, err
		}
		if !cold {
			if _, err := runBin(bin); err != nil {
				return row, err
			}
		}
		rss, err := peakRSS(e, bin, args...)
		if err != nil {
			return row, err
		}
		w, c := walls[k], cpus[k]
		slices.Sort(w)
		slices.Sort(c)
		med := percentile(w, 0.5)
		medians = append(medians, med)
		fig := fmt.Sprintf("median %s (min %s, max %s of %d; cpu median %s), peak RSS %d MiB", ms(med), ms(w[0]), ms(w[len(w)-1]), len(w), ms(percentile(c, 0.5)), rss>>10)
		if k == 0 {
			if med > limit || rss > memLimitKiB {
				result = "MISS"
			}
		} else {
			fig = "-base " + filepath.Base(bin) + ": " + fig
		}
		figs = append(figs, fig)
	}
	if len(medians) == 2 {
		figs = append(figs, fmt.Sprintf("%.2f x -base", float64(medians[0])/float64(medians[1])))
	}
	if cold {
		if err := os.RemoveAll(cache); err != nil {
			return row, err
		}
	}
	row.Figure = strings.Join(figs, "; ")
	row.Result = result
	return row, nil
}
