package claim_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/benchkit"
	"github.com/pickup-dev/pickup/internal/benchkit/drain"
	"github.com/pickup-dev/pickup/sessions"
)

// BenchmarkClaimRelease is one claim and one release of the same session
// per op, NoSync: two no-replace renames plus what the library does around
// them (validation, reading the claimed file back).
func BenchmarkClaimRelease(b *testing.B) {
	board, err := benchkit.NewBoard(filepath.Join(b.TempDir(), "board"))
	if err != nil {
		b.Fatal(err)
	}
	ids, err := benchkit.Fill(board, sessions.Todo, "", 0, 1)
	if err != nil {
		b.Fatal(err)
	}
	c, err := claim.New(board, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := benchkit.CPUTime()
	for b.Loop() {
		if _, err := c.Claim(context.Background(), ids[0]); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Release(context.Background(), ids[0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchkit.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkDrain8 is the drain of scripts/bench at a smaller size: 8
// goroutines, each with its own Client and Queue{Snapshot: time.Second},
// claim every session of a board (warm listing cache, NoSync) until
// ErrNothingAvailable. One op is one whole drain. Each op also measures the
// raw floor on a second board of the same size (8 goroutines racing plain
// rename(2) over the same names), untimed by the benchmark clock, and
// reports:
//
//	claims/s        the library's rate
//	floor-claims/s  the floor's rate
//	x-floor         their ratio (target >= 0.5, at 20,000 sessions in scripts/bench)
//	x-floor-cpu     floor CPU time / library CPU time, the same ratio as
//	                CPU cost, steadier than x-floor on a busy machine
//	x-work          the library's rate / drain.FloorWith's doing by hand
//	                all that a claim does besides its rename (a line of
//	                history, the move guard, the freshness check)
//	x-work-cpu      the same ratio in CPU time
func BenchmarkDrain8(b *testing.B) {
	const n, workers = 2000, 8
	var lib, floor, libCPU, floorCPU, rec, recCPU time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		fb, err := benchkit.NewBoard(filepath.Join(dir, fmt.Sprintf("floor%d", i)))
		if err != nil {
			b.Fatal(err)
		}
		ids, err := benchkit.Fill(fb, sessions.Todo, "", 0, n)
		if err != nil {
			b.Fatal(err)
		}
		lb, err := benchkit.NewBoard(filepath.Join(dir, fmt.Sprintf("lib%d", i)))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := benchkit.Fill(lb, sessions.Todo, "", 0, n); err != nil {
			b.Fatal(err)
		}
		if _, err := lb.ListState(sessions.Todo, false); err != nil { // warm the cache
			b.Fatal(err)
		}
		f, err := drain.Floor(fb, ids, workers)
		if err != nil {
			b.Fatal(err)
		}
		floor += f.Elapsed
		floorCPU += f.CPU
		rb, err := benchkit.NewBoard(filepath.Join(dir, fmt.Sprintf("work%d", i)))
		if err != nil {
			b.Fatal(err)
		}
		rids, err := benchkit.Fill(rb, sessions.Todo, "", 0, n)
		if err != nil {
			b.Fatal(err)
		}
		r, err := drain.FloorWith(rb, rids, workers, drain.Work{Line: true, Guard: true, Fresh: true})
		if err != nil {
			b.Fatal(err)
		}
		rec += r.Elapsed
		recCPU += r.CPU
		b.StartTimer()
		d, err := drain.Library(context.Background(), lb, workers, time.Second)
		if err != nil {
			b.Fatal(err)
		}
		lib += d.Elapsed
		libCPU += d.CPU
	}
	libRate := float64(n*b.N) / lib.Seconds()
	floorRate := float64(n*b.N) / floor.Seconds()
	b.ReportMetric(float64(lib.Nanoseconds())/float64(b.N), "ns/op") // the drains alone, not their checks
	b.ReportMetric(libRate, "claims/s")
	b.ReportMetric(floorRate, "floor-claims/s")
	b.ReportMetric(libRate/floorRate, "x-floor")
	// The same ratio in CPU time, which a busy machine disturbs less.
	b.ReportMetric(float64(floorCPU)/float64(libCPU), "x-floor-cpu")
	b.ReportMetric(libRate/(float64(n*b.N)/rec.Seconds()), "x-work")
	b.ReportMetric(float64(recCPU)/float64(libCPU), "x-work-cpu")
}
