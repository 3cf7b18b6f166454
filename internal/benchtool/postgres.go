package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/privatepg"
)

// --- a board that PostgreSQL arbitrates ---------------------------------------

// postgresBoard measures boards that PostgreSQL arbitrates, each against
// one local board in the same run (fsync on for both, and for the
// server): 4 boards × 4 agent processes draining 400 sessions made from
// all 4 (wall, claims/s) against the same drain of one local board; one
// `pickup next` (p50, p99) against the local next; and next --wait's
// wake-up after a `new` on another board (from the new's exit to the
// waiter's exit, p50 and p99).
func postgresBoard(e *env) (Row, error) {
	const boards, agents, single, wakes = 4, 4, 40, 20
	n := 400
	if e.drainN < 400 {
		n = 40 // -quick
	}
	row := Row{What: fmt.Sprintf("PostgreSQL board (server and boards fsync on): %d boards × %d agents drain %d; one `pickup next` (p50, p99 of %d) vs local next; next --wait wake-up after a new on another board (p50, p99 of %d)", boards, agents, n, single, wakes),
		Target: "drain ≤ 3× local; wake-up p50, p99 ≤ 50 ms; history pushes ≤ one per interval"}
	dir := e.dir("postgres")
	defer e.remove(dir)
	srv, err := privatepg.Start(filepath.Join(dir, "pg"), privatepg.Options{})
	if err != nil {
		return row, err
	}
	defer func() { _ = srv.Stop("fast") }()
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o700); err != nil {
		return row, err
	}
	defer os.RemoveAll(run) // the daemons see their sockets go and exit
	env := append(withoutPickupVars(), "PICKUP_PG_RUNDIR="+run)
	// Each board in a clone of one git remote: its history goes there
	// (pghistory.go).
	hist, err := newHistoryRemote(dir)
	if err != nil {
		return row, err
	}
	var dirs []string
	for i := range boards {
		d, err := hist.clone(filepath.Join(dir, fmt.Sprintf("b%d", i)))
		if err != nil {
			return row, err
		}
		if _, err := e.pickupIn(dir, env, "--dir", d, "init", "--shared", srv.URL("postgres")); err != nil {
			return row, err
		}
		if err := useInterval(d); err != nil {
			return row, err
		}
		dirs = append(dirs, d)
	}
	benv := func(d string) []string { return append(slices.Clone(env), "PICKUP_DIR="+d) }
	// One next at a time, PostgreSQL and local interleaved.
	local := filepath.Join(dir, "local-single")
	if err := seedBoard(e, local, single); err != nil {
		return row, err
	}
	for i := range single {
		if _, err := e.pickupIn(dir, benv(dirs[0]), "new", "--title", fmt.Sprintf("single %d", i)); err != nil {
			return row, err
		}
	}
	var pgT, locT []time.Duration
	for range single {
		t0 := time.Now()
		if _, err := e.pickupIn(dir, benv(dirs[0]), "--owner", "solo", "next"); err != nil {
			return row, err
		}
		t1 := time.Now()
		if _, err := e.pickupIn(dir, benv(local), "--owner", "solo", "next"); err != nil {
			return row, err
		}
		pgT, locT = append(pgT, t1.Sub(t0)), append(locT, time.Since(t1))
	}
	slices.Sort(pgT)
	slices.Sort(locT)
	// next --wait's wake-up.
	var wake []time.Duration
	for i := range wakes {
		cmd := exec.Command(e.bin, "--owner", "waiter", "next", "--wait", "30s")
		cmd.Env = benv(dirs[1])
		if err := cmd.Start(); err != nil {
			return row, err
		}
		time.Sleep(300 * time.Millisecond) // it listens
		if _, err := e.pickupIn(dir, benv(dirs[2]), "new", "--title", fmt.Sprintf("wake %d", i)); err != nil {
			return row, err
		}
		t0 := time.Now()
		if err := cmd.Wait(); err != nil {
			return row, fmt.Errorf("next --wait: %v", err)
		}
		wake = append(wake, time.Since(t0))
	}
	slices.Sort(wake)
	// The drain: sessions made from every board, then 16 agents.
	drain := func(round string) (int, time.Time, time.Duration, error) {
		var wg sync.WaitGroup
		errs := make([]error, boards)
		for i, d := range dirs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := i; k < n; k += boards {
					if _, err := e.pickupIn(dir, benv(d), "new", "--title", fmt.Sprintf("%s task %d", round, k)); err != nil {
						errs[i] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return 0, time.Time{}, 0, err
			}
		}
		penvs := make([][]string, boards)
		for i, d := range dirs {
			penvs[i] = benv(d)
		}
		t0 := time.Now()
		claims, err := e.drainAgentsEnv(dir, penvs, agents)
		return claims, t0, time.Since(t0), err
	}
	// Without the history first (history: off), then as init made the
	// boards: their history to the clones' remote (pghistory.go).
	if err := setHistory(dirs, "off"); err != nil {
		return row, err
	}
	offClaims, _, offWall, err := drain("off")
	if err != nil {
		return row, err
	}
	if err := setHistory(dirs, "origin"); err != nil {
		return row, err
	}
	claims, t0, wall, err := drain("on")
	if err != nil {
		return row, err
	}
	histLine, histOK := historyFigure(hist.pushesBetween(t0, t0.Add(wall)), wall)
	if _, err := e.pickupIn(dir, benv(dirs[0]), "sync"); err != nil {
		return row, err
	}
	histLine += fmt.Sprintf("; after a final sync the branch lists %d transitions; the same drain with history: off %.1f s = %.0f claims/s (with/without %.2f×)",
		hist.transitions(), offWall.Seconds(), float64(offClaims)/offWall.Seconds(), wall.Seconds()/offWall.Seconds())
	floorDir := filepath.Join(dir, "local")
	if err := seedBoard(e, floorDir, n); err != nil {
		return row, err
	}
	t1 := time.Now()
	lclaims, err := e.drainAgentsEnv(dir, slices.Repeat([][]string{benv(floorDir)}, boards), agents)
	floor := time.Since(t1)
	if err != nil {
		return row, err
	}
	ratio := wall.Seconds() / floor.Seconds()
	row.Figure = fmt.Sprintf("drain: %d claims in %.1f s = %.0f claims/s; local: %d in %.1f s = %.0f claims/s; postgres/local %.1f×. one next: p50 %s, p99 %s; local next p50 %s, p99 %s (%.1f×, %.1f×). wake-up: p50 %s, p99 %s",
		claims, wall.Seconds(), float64(claims)/wall.Seconds(), lclaims, floor.Seconds(), float64(lclaims)/floor.Seconds(), ratio,
		ms(percentile(pgT, 0.5)), ms(percentile(pgT, 0.99)), ms(percentile(locT, 0.5)), ms(percentile(locT, 0.99)),
		percentile(pgT, 0.5).Seconds()/percentile(locT, 0.5).Seconds(), percentile(pgT, 0.99).Seconds()/percentile(locT, 0.99).Seconds(),
		ms(percentile(wake, 0.5)), ms(percentile(wake, 0.99))) + ". " + histLine
	row.Result = passIf(ratio <= 3 && claims == n && lclaims == n && percentile(wake, 0.99) <= 50*time.Millisecond && histOK)
	return row, nil
}

// drainAgentsEnv is drainAgents with one environment per board (the board
// named by PICKUP_DIR in it).
func (e *env) drainAgentsEnv(dir string, envs [][]string, agents int) (int, error) {
	places := make([]drainPlace, len(envs))
	for i, env := range envs {
		places[i] = drainPlace{dir, env}
	}
	return e.drain(places, agents, "b")
}
