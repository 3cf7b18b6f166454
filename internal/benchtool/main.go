// Command benchtool measures pickup against the speed targets and prints one
// line per target: what was measured, the figure, the target, PASS or MISS.
// scripts/bench builds the pickup binary and runs it:
//
//	go run ./internal/benchtool -bin /path/to/pickup [-only drain,next-10k] [-quick]
//
// Each measurement is a function returning one Row; boards that several
// measurements share are built once, lazily, by the env. To add one, write
// a func(*env) (Row, error) and list it in measurements.
//
// To see where a command spends its time, run it in-process under the CPU
// profiler (the product has no profiling hook of its own):
//
//	go run ./internal/benchtool -pprof cpu.out -runs 20 -- --dir B --owner o next
//	go tool pprof -top cpu.out
//
// Runs after the first see a warm cache; a command that changes the board
// (next) changes it on every run.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/benchtool/benchkit"
	"github.com/pickup-dev/pickup/internal/benchtool/drain"
	"github.com/pickup-dev/pickup/internal/cli"
	"github.com/pickup-dev/pickup/sessions"
)

// Row is one line of the report.
type Row struct {
	What   string
	Figure string
	Target string
	Result string // PASS, MISS or INFO (no target)
}

func passIf(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

type measurement struct {
	name string
	run  func(*env) (Row, error)
}

// measurements in report order.
var measurements = []measurement{
	{"syscalls", syscallFloor},
	{"drain", drainSnapshot},
	{"drain-plain", drainPlain},
	{"exec-floor", execFloor},
	{"next-10k", func(e *env) (Row, error) { return nextProcess(e, e.nextBig, false, 10*time.Millisecond) }},
	{"next-10k-nosync", func(e *env) (Row, error) { return nextProcess(e, e.nextBig, true, 10*time.Millisecond) }},
	{"next-100", func(e *env) (Row, error) { return nextProcess(e, e.nextSmall, false, 3*time.Millisecond) }},
	{"next-100-nosync", func(e *env) (Row, error) { return nextProcess(e, e.nextSmall, true, 3*time.Millisecond) }},
	{"list-cold", func(e *env) (Row, error) { return listProcess(e, false, true) }},
	{"list-warm", func(e *env) (Row, error) { return listProcess(e, false, false) }},
	{"list-json-cold", func(e *env) (Row, error) { return listProcess(e, true, true) }},
	{"list-json-warm", func(e *env) (Row, error) { return listProcess(e, true, false) }},
}

// env is what measurements share: settings, the binary, and boards built
// on first use.
type env struct {
	root               string // boards are made under it
	bin                string // the pickup binary
	goFloor            string // an empty Go program, or ""
	workers            int
	drainN             int
	plainN             int
	trials             int
	nextBig, nextSmall int
	listN, listTodo    int
	listRuns, coldRuns int
	snapshot           time.Duration
	keep               bool
	devnull            *os.File
	seq                int
	listBoard          string
}

// dir returns a new empty directory under root.
func (e *env) dir(name string) string {
	e.seq++
	return filepath.Join(e.root, fmt.Sprintf("%02d-%s", e.seq, name))
}

// noopEnv makes the driver exit at once when it runs itself as the Go
// process floor: after the init of every package it links, which are
// pickup's (internal/cli, claim, sessions) and all their dependencies.
const noopEnv = "BENCHTOOL_NOOP"

// remove deletes a board a measurement is done with, unless -keep.
func (e *env) remove(dir string) {
	if !e.keep {
		_ = os.RemoveAll(dir)
	}
}

func main() {
	if os.Getenv(noopEnv) == "1" {
		return
	}
	if os.Getenv(rssEnv) == "1" {
		os.Exit(reportChildRSS(os.Args[1:]))
	}
	e := &env{}
	flag.StringVar(&e.bin, "bin", "", "the pickup binary to time (required; scripts/bench builds it)")
	flag.StringVar(&e.goFloor, "go-floor", "", "an empty Go program (internal/benchtool/gofloor), timed as the floor of any Go process (scripts/bench builds it)")
	flag.StringVar(&e.root, "dir", "", "directory to build boards in (default: a new temporary directory, removed afterwards); its filesystem decides what fsync costs")
	only := flag.String("only", "", "comma-separated measurements to run (default: all): "+names())
	flag.IntVar(&e.workers, "workers", 8, "claiming goroutines in the drains")
	flag.IntVar(&e.drainN, "drain", 20000, "sessions in the drain board")
	flag.IntVar(&e.plainN, "drain-plain", 2000, "sessions in the drain through plain Client.Next (it lists todo/ on every call)")
	flag.DurationVar(&e.snapshot, "snapshot", time.Second, "NextOptions.Snapshot of the drain")
	flag.IntVar(&e.trials, "trials", 200, "timed `pickup next` processes per series")
	flag.IntVar(&e.nextBig, "next-big", 10000, "todo sessions on the big `pickup next` board")
	flag.IntVar(&e.nextSmall, "next-small", 100, "todo sessions on the small `pickup next` board")
	flag.IntVar(&e.listN, "list", 100000, "sessions on the `pickup list` board")
	flag.IntVar(&e.listTodo, "list-todo", 10000, "of which in todo/ (the rest are in done/)")
	flag.IntVar(&e.listRuns, "list-runs", 5, "timed `pickup list` processes per warm-cache row (the median is reported)")
	flag.IntVar(&e.coldRuns, "cold-runs", 3, "timed `pickup list` processes per cold-cache row")
	quick := flag.Bool("quick", false, "small sizes, to check the harness itself (figures are not comparable to the targets)")
	strict := flag.Bool("strict", false, "exit 1 if any target is missed")
	flag.BoolVar(&e.keep, "keep", false, "keep the boards (under -dir)")
	pprofOut := flag.String("pprof", "", "instead of measuring, run pickup in-process with the arguments after -- and write a CPU profile here")
	pprofRuns := flag.Int("runs", 10, "with -pprof: how many times to run the command")
	memProfile := flag.String("memprofile", "", "with -pprof: also write a heap profile (allocations of every run) here")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the driver here (it covers the in-process drains, not the pickup processes)")
	flag.Parse()
	if *pprofOut != "" {
		if err := profile(*pprofOut, *memProfile, *pprofRuns, flag.Args()); err != nil {
			fatalf("%v", err)
		}
		return
	}
	if *quick {
		e.drainN, e.plainN, e.trials, e.listN, e.listTodo, e.listRuns, e.coldRuns = 2000, 500, 20, 10000, 1000, 2, 1
	}
	if e.bin == "" {
		fatalf("-bin is required: go build -o /tmp/pickup . && go run ./internal/benchtool -bin /tmp/pickup")
	}
	bin, err := filepath.Abs(e.bin)
	if err != nil {
		fatalf("%v", err)
	}
	e.bin = bin
	if e.root == "" {
		e.root, err = os.MkdirTemp("", "pickup-bench-")
		if err != nil {
			fatalf("%v", err)
		}
	} else if err := os.MkdirAll(e.root, 0o755); err != nil {
		fatalf("%v", err)
	}
	if !e.keep {
		defer os.RemoveAll(e.root)
	}
	if e.devnull, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
		fatalf("%v", err)
	}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fatalf("%v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatalf("%v", err)
		}
		defer pprof.StopCPUProfile()
	}

	selected := measurements
	if *only != "" {
		selected = nil
		for _, n := range strings.Split(*only, ",") {
			i := slices.IndexFunc(measurements, func(m measurement) bool { return m.name == strings.TrimSpace(n) })
			if i < 0 {
				fatalf("unknown measurement %q; known: %s", n, names())
			}
			selected = append(selected, measurements[i])
		}
	}

	fmt.Printf("pickup benchmarks: %s %s/%s, %d CPUs (GOMAXPROCS %d), boards in %s\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), e.root)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MEASUREMENT\tWHAT\tFIGURE\tTARGET\tRESULT")
	failed, missed := 0, 0
	for _, m := range selected {
		fmt.Fprintf(os.Stderr, "  running %s ...", m.name)
		t0 := time.Now()
		row, err := m.run(e)
		if err != nil {
			row = Row{What: row.What, Figure: "error: " + err.Error(), Target: row.Target, Result: "ERROR"}
			failed++
		}
		if row.Result == "MISS" {
			missed++
		}
		fmt.Fprintf(os.Stderr, " %s in %.1fs\n", row.Result, time.Since(t0).Seconds())
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.name, row.What, row.Figure, cmp.Or(row.Target, "-"), row.Result)
	}
	tw.Flush()
	fmt.Printf("%d measurement(s): %d missed, %d failed\n", len(selected), missed, failed)
	if failed > 0 || (*strict && missed > 0) {
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// profile runs pickup's cli.Main with args runs times, stdout to /dev/null,
// under the CPU profiler, and writes a heap profile if memOut is set.
func profile(out, memOut string, runs int, args []string) error {
	if memOut != "" {
		runtime.MemProfileRate = 64 << 10
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	env := cli.OSEnv()
	env.Stdout, env.StdoutIsTerminal = devnull, false
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	t0 := time.Now()
	for i := 0; i < runs; i++ {
		if code := cli.Main(env, append([]string{"pickup"}, args...)); code != 0 {
			pprof.StopCPUProfile()
			return fmt.Errorf("pickup %s: exit code %d", strings.Join(args, " "), code)
		}
	}
	pprof.StopCPUProfile()
	fmt.Fprintf(os.Stderr, "%d runs of pickup %s: %s each; profile in %s\n", runs, strings.Join(args, " "), ms(time.Since(t0)/time.Duration(runs)), out)
	if memOut != "" {
		runtime.GC()
		mf, err := os.Create(memOut)
		if err != nil {
			return err
		}
		defer mf.Close()
		return pprof.Lookup("allocs").WriteTo(mf, 0)
	}
	return nil
}

func names() string {
	var n []string
	for _, m := range measurements {
		n = append(n, m.name)
	}
	return strings.Join(n, ",")
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchtool: "+format+"\n", args...)
	os.Exit(2)
}

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
func drainPair(e *env, n int, snapshot time.Duration) (lib, floor drain.Result, err error) {
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
	lib, err = drain.Library(context.Background(), lb, e.workers, snapshot)
	e.remove(fb.Dir)
	e.remove(lb.Dir)
	return
}

func drainSnapshot(e *env) (Row, error) {
	row := Row{
		What:   fmt.Sprintf("drain %d, %d goroutines, Queue{Snapshot: %s}, NoSync", e.drainN, e.workers, e.snapshot),
		Target: ">= 0.50 x floor",
	}
	lib, floor, err := drainPair(e, e.drainN, e.snapshot)
	if err != nil {
		return row, err
	}
	ratio := lib.Rate() / floor.Rate()
	row.Figure = fmt.Sprintf("%.2f x floor (library %s claims/s in %s, cpu %s; raw rename floor %s/s in %s, cpu %s)",
		ratio, count(lib.Rate()), ms(lib.Elapsed), ms(lib.CPU), count(floor.Rate()), ms(floor.Elapsed), ms(floor.CPU))
	row.Result = passIf(ratio >= 0.5)
	return row, nil
}

// drainPlain shows why Queue's snapshot exists: the same drain with
// Client.Next, which lists todo/ on every call, beside the snapshot drain
// on a board of the same (smaller) size.
func drainPlain(e *env) (Row, error) {
	row := Row{What: fmt.Sprintf("drain %d, %d goroutines, plain Client.Next vs Queue, NoSync", e.plainN, e.workers), Result: "INFO"}
	plain, floor, err := drainPair(e, e.plainN, 0)
	if err != nil {
		return row, err
	}
	snap, _, err := drainPair(e, e.plainN, e.snapshot)
	if err != nil {
		return row, err
	}
	row.Figure = fmt.Sprintf("Client.Next %s claims/s (%.2f x floor), Queue %s claims/s (%.2f x floor), floor %s/s",
		count(plain.Rate()), plain.Rate()/floor.Rate(), count(snap.Rate()), snap.Rate()/floor.Rate(), count(floor.Rate()))
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
// untimed. The cache is warmed by untimed calls first. The target is on the
// median wall time.
func nextProcess(e *env, n int, noSync bool, limit time.Duration) (Row, error) {
	mode := "fsync"
	if noSync {
		mode = "--no-sync"
	}
	row := Row{What: fmt.Sprintf("pickup next, %d todo, %s, %d trials", n, mode, e.trials), Target: "median <= " + ms(limit)}
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
	trial := func() (procResult, error) {
		r, err := runProc(e, args...)
		if err != nil {
			return r, err
		}
		held, err := b.ListOwner(owner)
		if err != nil {
			return r, err
		}
		if len(held) != 1 {
			return r, fmt.Errorf("after pickup next the owner holds %d sessions", len(held))
		}
		for _, s := range held {
			if _, err := c.Release(s.ID); err != nil {
				return r, err
			}
		}
		return r, nil
	}
	for i := 0; i < 3; i++ { // warm the cache, the binary and the page cache
		if _, err := trial(); err != nil {
			return row, err
		}
	}
	walls := make([]time.Duration, e.trials)
	cpus := make([]time.Duration, e.trials)
	for i := range walls {
		r, err := trial()
		if err != nil {
			return row, err
		}
		walls[i], cpus[i] = r.wall, r.cpu
	}
	row.Figure = spread(walls, cpus)
	row.Result = passIf(percentile(walls, 0.5) <= limit)
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
// runs once untimed first so that the cache is there.
func listProcess(e *env, asJSON, cold bool) (Row, error) {
	const limit, memLimitKiB = 1500 * time.Millisecond, 200 << 10
	kind := "warm cache"
	if cold {
		kind = "cold cache"
	}
	cmdName := "list"
	if asJSON {
		cmdName = "list --json"
	}
	row := Row{
		What:   fmt.Sprintf("pickup %s, %d sessions (%d todo, %d done), %s", cmdName, e.listN, e.listTodo, e.listN-e.listTodo, kind),
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
	if !cold {
		if _, err := runProc(e, args...); err != nil {
			return row, err
		}
	}
	var walls, cpus []time.Duration
	runs := e.listRuns
	if cold {
		runs = e.coldRuns
	}
	for i := 0; i < runs; i++ {
		if cold {
			if err := os.RemoveAll(cache); err != nil {
				return row, err
			}
		}
		r, err := runProc(e, args...)
		if err != nil {
			return row, err
		}
		walls, cpus = append(walls, r.wall), append(cpus, r.cpu)
	}
	if cold {
		if err := os.RemoveAll(cache); err != nil {
			return row, err
		}
	}
	rss, err := peakRSS(e, args...)
	if err != nil {
		return row, err
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	med := percentile(walls, 0.5)
	row.Figure = fmt.Sprintf("median %s (min %s, max %s of %d; cpu median %s), peak RSS %d MiB", ms(med), ms(walls[0]), ms(walls[len(walls)-1]), len(walls), ms(percentile(cpus, 0.5)), rss>>10)
	row.Result = passIf(med <= limit && rss <= memLimitKiB)
	return row, nil
}

// --- processes and figures --------------------------------------------------

// rssEnv makes the driver run the command in its arguments and report the
// command's peak RSS (see peakRSS).
const rssEnv = "BENCHTOOL_RSS"

// rssPrefix starts the line on which reportChildRSS reports.
const rssPrefix = "benchtool: peak RSS KiB: "

// peakRSS runs pickup with args once, through a fresh copy of this driver,
// and returns pickup's peak RSS in KiB. Not directly: a child started from
// this driver inherits its high-water mark (ru_maxrss survives exec, and
// this driver holds the boards it wrote), so the figure would be the
// driver's own whenever it is the larger.
func peakRSS(e *env, args ...string) (int64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, append([]string{e.bin}, args...)...)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PICKUP_") }), rssEnv+"=1")
	cmd.Stdout = e.devnull
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("pickup %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	_, after, ok := strings.Cut(stderr.String(), rssPrefix)
	if !ok {
		return 0, fmt.Errorf("pickup %s: no peak RSS reported: %s", strings.Join(args, " "), stderr.String())
	}
	return strconv.ParseInt(strings.TrimSpace(after), 10, 64)
}

// reportChildRSS runs argv, then prints its peak RSS on stderr and returns
// its exit code: this process is small, so the child inherits no big
// high-water mark from it.
func reportChildRSS(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		kib := int64(ru.Maxrss)
		if runtime.GOOS == "darwin" {
			kib /= 1024 // bytes there
		}
		fmt.Fprintf(os.Stderr, "\n%s%d\n", rssPrefix, kib)
	}
	return cmd.ProcessState.ExitCode()
}

type procResult struct {
	wall time.Duration
	cpu  time.Duration // user + system
}

// runProc runs the pickup binary with args, stdout to /dev/null, and
// returns its wall time (from before fork to after wait) and CPU time. The
// environment is the driver's without PICKUP_* variables, so fsync is on
// unless args say --no-sync.
func runProc(e *env, args ...string) (procResult, error) {
	return runCmd(e, exec.Command(e.bin, args...))
}

func runCmd(e *env, cmd *exec.Cmd) (procResult, error) {
	args := cmd.Args[1:]
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PICKUP_") })
	cmd.Stdout = e.devnull // an *os.File: no copying goroutine
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return procResult{}, fmt.Errorf("pickup %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return procResult{}, err
	}
	r := procResult{wall: wall}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return r, nil
}

// percentile returns the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
}

func us(d time.Duration) string { return fmt.Sprintf("%.2fµs", float64(d)/float64(time.Microsecond)) }

// count formats a rate with thousands separators.
func count(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
