package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter/postgres"
	"github.com/pickup-dev/pickup/internal/privatepg"
)

// --- a board that PostgreSQL arbitrates ---------------------------------------

// postgresBoard measures boards that PostgreSQL arbitrates, each against
// its floors in the same run (fsync on everywhere, the server too): 4
// boards × 4 agent processes draining 400 sessions made from all 4 (wall,
// claims/s) against the same drain of one local board and of 4 clones of
// a git-shared board (the same agents, the same sessions made the same
// way); one `pickup next` (p50, p99) against the local next; and next
// --wait's wake-up after a `new` on another board (from the new's exit to
// the waiter's exit, so the claim it makes is counted; p50 and p99)
// against the same wake-up on one local board.
func postgresBoard(e *env) (Row, error) {
	const boards, agents, single = 4, 4, 40
	n, wakes := 400, 100
	if e.drainN < 400 {
		n, wakes = 40, 10 // -quick
	}
	row := Row{What: fmt.Sprintf("PostgreSQL board (server and boards fsync on): %d boards × %d agents drain %d vs the same drain on one local board and on %d clones of a git-shared board; one `pickup next` (p50, p99 of %d) vs local next; next --wait wake-up after a new on another board, until the waiter exits with its claim (p50, p99 of %d) vs the same on one local board; the history's pushes to git during the drain", boards, agents, n, boards, single, wakes),
		Target: "drain ≤ 3× local, claims/s ≥ 20× git-shared; wake-up p50, p99 ≤ 50 ms; history pushes ≤ one per interval"}
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
	// The helper the boards' pickup finds next to itself: its daemon's
	// socket is named after it (postgres.SocketPath).
	exe := e.bin
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	helper := filepath.Join(filepath.Dir(exe), postgres.HelperName)
	// Each board in a clone of one git remote: its history goes there
	// (internal/arbiter/postgres/history_steps.go).
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
	var pgT, locT, goT []time.Duration
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
		if e.goFloor != "" {
			t2 := time.Now()
			if err := exec.Command(e.goFloor).Run(); err != nil {
				return row, err
			}
			goT = append(goT, time.Since(t2))
		}
	}
	slices.Sort(pgT)
	slices.Sort(locT)
	slices.Sort(goT)
	// The floor of the round trips a command makes: a state request
	// that finds nothing changed, to the daemon the nexts used.
	trips, err := daemonRoundTrips(run, helper, srv.URL("postgres"), 200)
	if err != nil {
		return row, err
	}
	// next --wait's wake-up, then the same on one local board.
	wake, err := e.wakeUps(dir, benv(dirs[1]), benv(dirs[2]), wakes)
	if err != nil {
		return row, err
	}
	localWake := filepath.Join(dir, "local-wake")
	if err := seedBoard(e, localWake, 0); err != nil {
		return row, err
	}
	lwake, err := e.wakeUps(dir, benv(localWake), benv(localWake), wakes)
	if err != nil {
		return row, err
	}
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
	// boards: their history to the clones' remote (internal/arbiter/postgres/history_steps.go).
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
	// The database's share of the drain, without pickup (a floor).
	dbShare, err := daemonDrain(run, helper, srv.URL("postgres"), n, boards*agents)
	if err != nil {
		return row, fmt.Errorf("the database's share of the drain: %w", err)
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
	gclaims, gwall, err := e.gitSharedDrain(filepath.Join(dir, "git"), boards, agents, n)
	if err != nil {
		return row, err
	}
	ratio := wall.Seconds() / floor.Seconds()
	rate, grate := float64(claims)/wall.Seconds(), float64(gclaims)/gwall.Seconds()
	row.Figure = fmt.Sprintf("drain: %d claims in %.1f s = %.0f claims/s; local: %d in %.1f s = %.0f claims/s; git-shared: %d in %.1f s = %.1f claims/s; postgres/local %.1f× the time, %.1f× the git-shared claims/s. one next: p50 %s, p99 %s; local next p50 %s, p99 %s (%.1f×, %.1f×). wake-up: p50 %s, p99 %s; local p50 %s, p99 %s",
		claims, wall.Seconds(), rate, lclaims, floor.Seconds(), float64(lclaims)/floor.Seconds(), gclaims, gwall.Seconds(), grate, ratio, rate/grate,
		ms(percentile(pgT, 0.5)), ms(percentile(pgT, 0.99)), ms(percentile(locT, 0.5)), ms(percentile(locT, 0.99)),
		percentile(pgT, 0.5).Seconds()/percentile(locT, 0.5).Seconds(), percentile(pgT, 0.99).Seconds()/percentile(locT, 0.99).Seconds(),
		ms(percentile(wake, 0.5)), ms(percentile(wake, 0.99)), ms(percentile(lwake, 0.5)), ms(percentile(lwake, 0.99)))
	dbFloor := floor + dbShare
	row.Figure += fmt.Sprintf(". floor of the drain: the local drain %.1f s + the database's share %.1f s (the same %d claims and dones and the reads before them, sent to the daemon by %d goroutines, no race lost) = %.1f s, so at best %.1f× local and %.1f× the git-shared claims/s",
		floor.Seconds(), dbShare.Seconds(), n, boards*agents, dbFloor.Seconds(), dbFloor.Seconds()/floor.Seconds(), gwall.Seconds()/dbFloor.Seconds())
	row.Figure += ". " + histLine
	row.Figure += fmt.Sprintf(". floors: a round trip to the daemon p50 %s, p99 %s", ms(percentile(trips, 0.5)), ms(percentile(trips, 0.99)))
	if len(goT) > 0 {
		row.Figure += fmt.Sprintf("; an empty Go process p50 %s, p99 %s", ms(percentile(goT, 0.5)), ms(percentile(goT, 0.99)))
	}
	row.Result = passIf(ratio <= 3 && rate >= 20*grate && claims == n && lclaims == n && gclaims == n && percentile(wake, 0.99) <= 50*time.Millisecond && histOK)
	return row, nil
}

// wakeUps starts `next --wait` with waitEnv n times, and each time, once
// it waits, makes a session with newEnv: it returns the times from each
// new's exit to the waiter's exit (it claimed the session), sorted.
func (e *env) wakeUps(dir string, waitEnv, newEnv []string, n int) ([]time.Duration, error) {
	var wake []time.Duration
	for i := range n {
		cmd := exec.Command(e.bin, "--owner", "waiter", "next", "--wait", "30s")
		cmd.Env = waitEnv
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		time.Sleep(300 * time.Millisecond) // it listens
		if _, err := e.pickupIn(dir, newEnv, "new", "--title", fmt.Sprintf("wake %d", i)); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, err
		}
		t0 := time.Now()
		if err := cmd.Wait(); err != nil {
			return nil, fmt.Errorf("next --wait: %v", err)
		}
		wake = append(wake, time.Since(t0))
	}
	slices.Sort(wake)
	return wake, nil
}

// gitSharedDrain is the PostgreSQL row's drain on a git-shared board:
// clones of one remote served by git daemon on loopback, n sessions made
// from all of them as on the PostgreSQL boards, then agents processes in
// each clone (the same drain). It returns the claims and the wall time.
func (e *env) gitSharedDrain(dir string, clones, agents, n int) (int, time.Duration, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, 0, err
	}
	r, err := startSharedRemote(dir)
	if err != nil {
		return 0, 0, err
	}
	defer r.stop()
	env := sharedEnv()
	var dirs []string
	for i := range clones {
		d, err := e.sharedClone(r, fmt.Sprintf("c%d", i), env)
		if err != nil {
			return 0, 0, err
		}
		dirs = append(dirs, d)
	}
	var wg sync.WaitGroup
	errs := make([]error, clones)
	for i, d := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := i; k < n; k += clones {
				if _, err := e.pickupIn(d, env, "new", "--title", fmt.Sprintf("task %d", k)); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	claims, err := e.drainAgents(dirs, agents, env)
	return claims, time.Since(t0), err
}

// daemonRoundTrips times n requests to the pickup-postgres daemon for url
// (its socket in run), each a state of the rows changed since a horizon no
// transaction has reached: the answer holds the heartbeats alone. It is
// the floor of a command's round trip, without the command.
func daemonRoundTrips(run, helper, url string, n int) ([]time.Duration, error) {
	c, err := net.Dial("unix", postgres.SocketPath(run, helper, url))
	if err != nil {
		return nil, fmt.Errorf("dial the daemon: %w", err)
	}
	defer c.Close()
	in := bufio.NewReader(c)
	call := func(req postgres.Request) error {
		data, err := json.Marshal(req)
		if err != nil {
			return err
		}
		if _, err := c.Write(append(data, '\n')); err != nil {
			return err
		}
		line, err := in.ReadBytes('\n')
		if err != nil {
			return err
		}
		var res postgres.Response
		if err := json.Unmarshal(line, &res); err != nil {
			return err
		}
		if res.Kind != "" {
			return fmt.Errorf("daemon: %s", res.Err)
		}
		return nil
	}
	if err := call(postgres.Request{Op: "open", URL: url}); err != nil {
		return nil, err
	}
	var out []time.Duration
	for range n {
		t0 := time.Now()
		if err := call(postgres.Request{Op: "state", Horizon: math.MaxInt64, Bodies: true}); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	slices.Sort(out)
	return out, nil
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

// daemonDrain is the database's share of a drain, without pickup: workers
// goroutines, each on a connection of its own to the daemon that the
// boards used, make n sessions, then take them in turn from one list (no
// race lost) and send what a claim and a done send (a read of what changed
// since the worker's last read, then the move; twice). It returns the
// wall time of the taking. Added to the local drain's time, it is a floor
// of the PostgreSQL drain: the same work on the same two cores.
func daemonDrain(run, helper, url string, n, workers int) (time.Duration, error) {
	type conn struct {
		c       net.Conn
		in      *bufio.Reader
		through int64
	}
	dial := func() (*conn, error) {
		c, err := net.Dial("unix", postgres.SocketPath(run, helper, url))
		if err != nil {
			return nil, fmt.Errorf("dial the daemon: %w", err)
		}
		return &conn{c: c, in: bufio.NewReader(c)}, nil
	}
	call := func(k *conn, req postgres.Request) (postgres.Response, error) {
		var res postgres.Response
		data, err := json.Marshal(req)
		if err != nil {
			return res, err
		}
		if _, err := k.c.Write(append(data, '\n')); err != nil {
			return res, err
		}
		line, err := k.in.ReadBytes('\n')
		if err != nil {
			return res, err
		}
		if err := json.Unmarshal(line, &res); err != nil {
			return res, err
		}
		if res.Kind != "" || res.Lost {
			return res, fmt.Errorf("daemon: %s %s", res.Kind, res.Err)
		}
		return res, nil
	}
	read := func(k *conn) error {
		res, err := call(k, postgres.Request{Op: "state", Horizon: k.through, Bodies: true})
		if err == nil && res.Through > 0 {
			k.through = res.Through
		}
		return err
	}
	conns := make([]*conn, workers)
	for i := range conns {
		k, err := dial()
		if err != nil {
			return 0, err
		}
		defer k.c.Close()
		if _, err := call(k, postgres.Request{Op: "open", URL: url}); err != nil {
			return 0, err
		}
		if err := read(k); err != nil {
			return 0, err
		}
		conns[i] = k
	}
	body := []byte("---\ntitle: floor\npriority: medium\n---\n")
	stamp := time.Now().UnixNano()
	ids := make(chan string, n)
	for i := range n {
		id := fmt.Sprintf("floor-%d-%d", stamp, i)
		m := &postgres.Move{ID: id, Op: "new", ToState: "todo", Body: body, Tx: fmt.Sprintf("f%dn%d", stamp, i)}
		if _, err := call(conns[i%workers], postgres.Request{Op: "move", Move: m}); err != nil {
			return 0, err
		}
		ids <- id
	}
	close(ids)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	t0 := time.Now()
	for w, k := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("floor%d", w)
			for id := range ids {
				for _, m := range []postgres.Move{
					{ID: id, Op: "claim", FromState: "todo", ToState: "doing", ToOwner: owner, Owner: owner, Body: body, Tx: fmt.Sprintf("f%dc%s", stamp, id)},
					{ID: id, Op: "done", FromState: "doing", FromOwner: owner, ToState: "done", Owner: owner, Body: body, Tx: fmt.Sprintf("f%dd%s", stamp, id)},
				} {
					if err := read(k); err != nil {
						errs[w] = err
						return
					}
					if _, err := call(k, postgres.Request{Op: "move", Move: &m}); err != nil {
						errs[w] = err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(t0), errors.Join(errs...)
}
