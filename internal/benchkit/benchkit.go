// Package benchkit writes boards of any size fast, for the benchmarks of
// pickup: the Go benchmarks (sessions/bench_test.go, claim/bench_test.go)
// and the driver behind scripts/bench (internal/cmd/bench) build the same
// boards. It depends on package sessions only.
package benchkit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// Epoch is the creation time of session 0; session i was created i seconds
// later, and its id is that time in sessions.IDFormat.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ID returns the id of session i.
func ID(i int) string { return Epoch.Add(time.Duration(i) * time.Second).Format(sessions.IDFormat) }

var priorities = [...]sessions.Priority{sessions.Medium, sessions.High, sessions.Medium, sessions.Low}

// Content returns the file of session i: what Board.Create writes for a
// session with a mix of priorities, a title, tags on one in five, and a
// short markdown body.
func Content(i int) []byte {
	m := sessions.Meta{
		Priority:  priorities[i%len(priorities)],
		CreatedAt: Epoch.Add(time.Duration(i) * time.Second),
		Title:     fmt.Sprintf("Bench session %d: make the thing faster", i),
	}
	if i%5 == 0 {
		m.Tags = []string{"bench", "perf"}
	}
	body := fmt.Sprintf("# Bench session %d\n\nSteps:\n\n1. Read the code.\n2. Measure it.\n3. Change one thing and measure again.\n\nNotes: nothing here is read by listing; it only makes the file a realistic size.\n", i)
	return sessions.Render(m, []byte(body))
}

// NewBoard creates a board at dir (which must not hold one yet) in NoSync
// mode.
func NewBoard(dir string) (*sessions.Board, error) {
	b, err := sessions.Init(dir)
	if err != nil {
		return nil, err
	}
	b.NoSync = true
	return b, nil
}

// Fill writes sessions first .. first+n-1 into state st (owner, for
// sessions.Doing) with plain os.WriteFile: no temporary file, no fsync, and
// no id reservation, so that a board of 100,000 sessions takes seconds. The
// files are byte for byte what Board.Create writes. It returns the ids in
// index order.
func Fill(b *sessions.Board, st sessions.State, owner string, first, n int) ([]string, error) {
	dir := b.StateDir(st, owner)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = ID(first + i)
	}
	workers := min(4, max(1, runtime.GOMAXPROCS(0)*2), max(1, n))
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if err := os.WriteFile(filepath.Join(dir, ids[i]+".md"), Content(first+i), 0o644); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return ids, errors.Join(errs...)
}

// CPUTime is the user plus system CPU time this process has used so far,
// all threads together. On a busy machine the CPU time of an operation
// varies far less than its wall time, so benchmarks report it beside ns/op
// (as cpu-ns/op): b.ReportMetric(float64(benchkit.CPUTime()-start)/float64(b.N), "cpu-ns/op").
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
