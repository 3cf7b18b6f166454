package main

// Named locks through the library, against the filesystem's floor: what one
// durable change of a directory costs here (create a file, fsync the
// directory), measured in the same run on the same filesystem.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pickup-dev/pickup/claim"
)

func init() {
	measurements = append(measurements, measurement{"lock-lib", lockLibrary})
}

// lockLibDuration is how long each series of lockLibrary runs.
const lockLibDuration = 2 * time.Second

// dirSyncFloor creates a file and fsyncs its directory in a loop, from
// workers goroutines each in a directory of its own, for d: the rate of
// durable directory changes this filesystem gives (per second, all
// goroutines together).
func dirSyncFloor(root string, workers int, d time.Duration) (float64, error) {
	var n atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	deadline := time.Now().Add(d)
	t0 := time.Now()
	for w := 0; w < workers; w++ {
		dir := filepath.Join(root, "floor-"+strconv.Itoa(w))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			df, err := os.Open(dir)
			if err != nil {
				errs <- err
				return
			}
			defer df.Close()
			for i := 0; time.Now().Before(deadline); i++ {
				f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(i)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
				if err == nil {
					err = f.Close()
				}
				if err == nil {
					err = df.Sync()
				}
				if err != nil {
					errs <- err
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(n.Load()) / time.Since(t0).Seconds(), nil
}

// lockRate runs acquire+release of a key of its own in a loop from workers
// goroutines sharing one claim.Locks, for d, and returns acquire+release
// pairs per second.
func lockRate(dir string, workers int, noSync bool, d time.Duration) (float64, error) {
	l := claim.NewLocks(dir)
	l.NoSync = noSync
	defer l.Close()
	var n atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	deadline := time.Now().Add(d)
	t0 := time.Now()
	for w := 0; w < workers; w++ {
		key := "bench:key-" + strconv.Itoa(w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				unlock, err := l.Acquire(context.Background(), key)
				if err == nil {
					err = unlock()
				}
				if err != nil {
					errs <- err
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(n.Load()) / time.Since(t0).Seconds(), nil
}

// lockLibrary measures uncontended acquire+release through claim.Locks with
// fsync on and off, from 1 and from e.workers goroutines (each its own key,
// one Locks), against the directory-fsync floor from as many goroutines.
// The target is on the durable (fsync on) rate with e.workers goroutines:
// at least half the floor, since an acquire is durable only once its
// record and its name are.
func lockLibrary(e *env) (Row, error) {
	row := Row{
		What:   fmt.Sprintf("named lock acquire+release, library, uncontended, 1 and %d goroutines (a key each), fsync on and off, %s each; floor: create a file + fsync its directory, same filesystem", e.workers, lockLibDuration),
		Target: fmt.Sprintf("fsync on, %d goroutines: >= 0.50 x floor", e.workers),
	}
	root := e.dir("lock-lib")
	defer e.remove(root)
	var figs []string
	pass := false
	for _, workers := range []int{1, e.workers} {
		floor, err := dirSyncFloor(filepath.Join(root, fmt.Sprintf("floor-%d", workers)), workers, lockLibDuration)
		if err != nil {
			return row, err
		}
		on, err := lockRate(filepath.Join(root, fmt.Sprintf("on-%d", workers)), workers, false, lockLibDuration)
		if err != nil {
			return row, err
		}
		off, err := lockRate(filepath.Join(root, fmt.Sprintf("off-%d", workers)), workers, true, lockLibDuration)
		if err != nil {
			return row, err
		}
		figs = append(figs, fmt.Sprintf("%d goroutine(s): fsync on %s/s = %.2f x floor, fsync off %s/s = %.1f x floor; floor %s dir fsyncs/s",
			workers, count(on), on/floor, count(off), off/floor, count(floor)))
		if workers == e.workers {
			pass = on/floor >= 0.5
		}
	}
	row.Figure = figs[0]
	for _, f := range figs[1:] {
		row.Figure += "; " + f
	}
	row.Result = passIf(pass)
	return row, nil
}
