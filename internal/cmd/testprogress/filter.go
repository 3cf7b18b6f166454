package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json), build events
// included (ImportPath, FailedBuild).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	Elapsed     float64
	ImportPath  string
	FailedBuild string
}

// outLine is one line of output and the test that printed it ("" for the
// package itself).
type outLine struct{ test, text string }

// pkgState is a package that started and has not finished.
type pkgState struct {
	started time.Time
	out     []outLine
	// done holds the tests that finished (pass, fail or skip); the output
	// of a test that never did is printed when its package fails.
	done    map[string]bool
	printed map[string]bool // tests whose output a failure printed
	// took holds the time of each top-level test that finished: a slow
	// package's line names its slowest, so that what a suite costs can be
	// read from its log.
	took map[string]time.Duration
}

// filter is the state between lines.
type filter struct {
	w       io.Writer
	now     func() time.Time
	start   time.Time
	running map[string]*pkgState
	builds  map[string][]string // build output by ImportPath
	passed  int
	failed  []string
	skipped int
}

func newFilter(w io.Writer, now func() time.Time) *filter {
	return &filter{w: w, now: now, start: now(), running: map[string]*pkgState{}, builds: map[string][]string{}}
}

// line handles one line of input. A line that is not a test2json event
// (go test prints some errors as plain text) is passed through.
func (f *filter) line(b []byte) {
	var ev event
	if err := json.Unmarshal(b, &ev); err != nil || (ev.Action == "") {
		fmt.Fprintf(f.w, "%s\n", b)
		return
	}
	f.event(ev)
}

func (f *filter) event(ev event) {
	switch ev.Action {
	case "build-output":
		f.builds[ev.ImportPath] = append(f.builds[ev.ImportPath], ev.Output)
		return
	case "build-fail":
		return // printed with the package that needed the build
	}
	p := f.pkg(ev.Package)
	switch ev.Action {
	case "output":
		p.out = append(p.out, outLine{ev.Test, ev.Output})
	case "pass", "skip", "fail":
		if ev.Test != "" {
			p.done[ev.Test] = true
			if !strings.Contains(ev.Test, "/") {
				p.took[ev.Test] = time.Duration(ev.Elapsed * float64(time.Second))
			}
			if ev.Action == "fail" {
				f.printTest(p, ev.Package, ev.Test)
			}
			return
		}
		f.finishPackage(ev, p)
	}
}

// pkg returns the state of a running package, starting it if new.
func (f *filter) pkg(name string) *pkgState {
	p := f.running[name]
	if p == nil {
		p = &pkgState{started: f.now(), done: map[string]bool{}, printed: map[string]bool{}, took: map[string]time.Duration{}}
		f.running[name] = p
	}
	return p
}

// printTest prints the output of a failed top-level test, its subtests'
// included. A failed subtest waits for its parent, which fails after it.
func (f *filter) printTest(p *pkgState, pkg, test string) {
	if strings.Contains(test, "/") {
		return
	}
	var b strings.Builder
	for _, l := range p.out {
		if topTest(l.test) == test {
			b.WriteString(l.text)
		}
	}
	p.printed[test] = true
	fmt.Fprintf(f.w, "--- %s %s failed; its output:\n%s", short(pkg), test, endLine(b.String()))
}

// topTest is the top-level test of a test or subtest name.
func topTest(test string) string {
	top, _, _ := strings.Cut(test, "/")
	return top
}

// finishPackage prints a package's line, and for a failure whatever of its
// output no failed test printed: its build errors, and the output of the
// package itself and of tests that never finished (a panic, a timeout).
func (f *filter) finishPackage(ev event, p *pkgState) {
	delete(f.running, ev.Package)
	elapsed := time.Duration(ev.Elapsed * float64(time.Second))
	switch ev.Action {
	case "pass":
		f.passed++
		fmt.Fprintf(f.w, "ok    %-40s %s%s\n", short(ev.Package), round(elapsed), slowest(p.took, elapsed))
	case "skip":
		f.skipped++
		fmt.Fprintf(f.w, "-     %-40s no tests\n", short(ev.Package))
	case "fail":
		f.failed = append(f.failed, short(ev.Package))
		var b strings.Builder
		for _, o := range f.builds[ev.FailedBuild] {
			b.WriteString(o)
		}
		for _, l := range p.out {
			top := topTest(l.test)
			switch {
			case l.test == "" && goSummary(l.text):
			case l.test == "" || (!p.done[top] && !p.printed[top]):
				b.WriteString(l.text)
			}
		}
		if b.Len() > 0 {
			fmt.Fprintf(f.w, "--- %s failed outside a finished test; its output:\n%s", short(ev.Package), endLine(b.String()))
		}
		fmt.Fprintf(f.w, "FAIL  %-40s %s%s\n", short(ev.Package), round(elapsed), slowest(p.took, elapsed))
	}
}

// Packages that take at least slowPackage have their slowest slowTests
// tests named on their line.
const (
	slowPackage = 30 * time.Second
	slowTests   = 5
)

// slowest names the slowest top-level tests of a package that took
// elapsed, for the end of its line: " (slowest: TestA 2m1s, TestB 40.2s)".
// Parallel tests overlap, so their times may add up to more than elapsed.
func slowest(took map[string]time.Duration, elapsed time.Duration) string {
	if elapsed < slowPackage || len(took) == 0 {
		return ""
	}
	names := make([]string, 0, len(took))
	for n := range took {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(took[b], took[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	if len(names) > slowTests {
		names = names[:slowTests]
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + " " + round(took[n])
	}
	return " (slowest: " + strings.Join(parts, ", ") + ")"
}

// goSummary reports a package-level line that go test prints for every
// package ("PASS", "FAIL", "FAIL<tab>pkg<tab>1.2s", "ok ..."): the line
// filter prints its own.
func goSummary(s string) bool {
	s = strings.TrimRight(s, "\n")
	return s == "PASS" || s == "FAIL" || strings.HasPrefix(s, "FAIL\t") || strings.HasPrefix(s, "ok  \t")
}

// tick names the packages still running and how long each has run; with
// none running, go is compiling and vetting the next test binaries.
func (f *filter) tick() {
	now := f.now()
	if len(f.running) == 0 {
		fmt.Fprintf(f.w, "      %s in: building test binaries (none running yet)\n", round(now.Sub(f.start)))
		return
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range f.running {
			if !yield(n) {
				return
			}
		}
	})
	slices.SortStableFunc(names, func(a, b string) int { return f.running[a].started.Compare(f.running[b].started) })
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s (%s)", short(n), round(now.Sub(f.running[n].started))))
	}
	fmt.Fprintf(f.w, "      %s in: still running %s\n", round(now.Sub(f.start)), strings.Join(parts, ", "))
}

// finish prints the summary once the input ends.
func (f *filter) finish() {
	msg := fmt.Sprintf("%d package(s) passed, %d failed, %d without tests, in %s", f.passed, len(f.failed), f.skipped, round(f.now().Sub(f.start)))
	if len(f.failed) > 0 {
		msg += "; failed: " + strings.Join(f.failed, ", ")
	}
	if len(f.running) > 0 {
		msg += fmt.Sprintf("; %d package(s) never finished", len(f.running))
	}
	fmt.Fprintln(f.w, msg)
}

// short drops the module path from a package name.
func short(pkg string) string {
	const module = "github.com/pickup-dev/pickup"
	if pkg == module {
		return "."
	}
	return strings.TrimPrefix(pkg, module+"/")
}

func round(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// endLine makes sure s ends with a newline.
func endLine(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}
