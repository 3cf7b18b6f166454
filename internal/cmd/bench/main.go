// Command benchtool measures pickup against the speed targets and prints one
// line per target: what was measured, the figure, the target, PASS or MISS.
// scripts/bench builds the pickup binary and runs it:
//
//	go run ./internal/cmd/bench -bin /path/to/pickup [-only drain,next-10k] [-quick]
//
// Each measurement is a function returning one Row; boards that several
// measurements share are built once, lazily, by the env. To add one, write
// a func(*env) (Row, error) and list it in measurements.
//
// To see where a command spends its time, run it in-process under the CPU
// profiler (the product has no profiling hook of its own):
//
//	go run ./internal/cmd/bench -pprof cpu.out -runs 20 -- --dir B --owner o next
//	go tool pprof -top cpu.out
//
// Runs after the first see a warm cache; a command that changes the board
// (next) changes it on every run.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"github.com/pickup-dev/pickup/internal/roles"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pickup-dev/pickup/internal/cli"
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
	{"script-drain", scriptDrain},
	{"kill-recover", killRecover},
	{"shared", sharedBoard},
	{"postgres", postgresBoard},
	{"next-10k", func(e *env) (Row, error) { return nextProcess(e, e.nextBig, false, 4) }},
	{"next-10k-nosync", func(e *env) (Row, error) { return nextProcess(e, e.nextBig, true, 4) }},
	{"next-100", func(e *env) (Row, error) { return nextProcess(e, e.nextSmall, false, 2) }},
	{"next-100-nosync", func(e *env) (Row, error) { return nextProcess(e, e.nextSmall, true, 2) }},
	{"next-tag-10k", func(e *env) (Row, error) { return nextTagProcess(e, e.nextBig, false) }},
	{"next-tag-10k-nosync", func(e *env) (Row, error) { return nextTagProcess(e, e.nextBig, true) }},
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
	linkFloor          string // a binary linking pickup's packages that exits in main, or ""
	base               string // a second pickup binary timed alongside bin (-base), or ""
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
	// The commands it runs in-process start it again as a watchdog.
	if code, ok := roles.Run(os.Args); ok {
		os.Exit(code)
	}
	if os.Getenv(noopEnv) == "1" {
		return
	}
	if os.Getenv(rssEnv) == "1" {
		os.Exit(reportChildRSS(os.Args[1:]))
	}
	e := &env{}
	flag.StringVar(&e.bin, "bin", "", "the pickup binary to time (required; scripts/bench builds it)")
	flag.StringVar(&e.base, "base", "", "a second pickup binary (say, built from an older commit) timed in the same rounds as -bin by the process rows, for before/after ratios")
	flag.StringVar(&e.linkFloor, "link-floor", "", "a binary that links pickup's packages and exits in main (internal/cmd/bench/linkfloor, built with pickup's tags), timed as the floor of pickup's start-up (scripts/bench builds it)")
	flag.StringVar(&e.goFloor, "go-floor", "", "an empty Go program (internal/cmd/bench/gofloor), timed as the floor of any Go process (scripts/bench builds it)")
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
		fatalf("-bin is required: go build -o /tmp/pickup . && go run ./internal/cmd/bench -bin /tmp/pickup")
	}
	bin, err := filepath.Abs(e.bin)
	if err != nil {
		fatalf("%v", err)
	}
	e.bin = bin
	if e.base != "" {
		if e.base, err = filepath.Abs(e.base); err != nil {
			fatalf("%v", err)
		}
	}
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
