package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// --- the shared board: claims won at a git remote ---------------------------

// sharedRemote is a bare repository served by `git daemon` on loopback.
type sharedRemote struct {
	root, url string
	daemon    *exec.Cmd
}

func startSharedRemote(dir string) (*sharedRemote, error) {
	srv := filepath.Join(dir, "srv")
	if out, err := exec.Command("git", "init", "-q", "--bare", filepath.Join(srv, "board.git")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git init: %v: %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	exe := "/usr/lib/git-core/git-daemon"
	if _, err := os.Stat(exe); err != nil {
		exe = "git-daemon"
	}
	d := exec.Command(exe, "--reuseaddr", "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), "--base-path="+srv, "--export-all", "--enable=receive-pack", srv)
	if err := d.Start(); err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if i > 500 {
			_ = d.Process.Kill()
			return nil, fmt.Errorf("git daemon does not listen: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return &sharedRemote{root: dir, url: fmt.Sprintf("git://127.0.0.1:%d/board.git", port), daemon: d}, nil
}

func (r *sharedRemote) stop() { _ = r.daemon.Process.Kill(); _ = r.daemon.Wait() }

// sharedEnv is the environment of pickup and git in the shared rows.
func sharedEnv(extra ...string) []string {
	env := slices.DeleteFunc(withoutPickupVars(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
	return append(append(env, "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@localhost",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@localhost"), extra...)
}

// clone makes a clone of r named name and joins its shared board.
func (e *env) sharedClone(r *sharedRemote, name string, env []string) (string, error) {
	dir := filepath.Join(r.root, name)
	cmd := exec.Command("git", "clone", "-q", r.url, dir)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("git clone: %v: %s", err, out)
	}
	if _, err := e.pickupIn(dir, env, "init", "--shared"); err != nil {
		return "", err
	}
	return dir, nil
}

// pickupIn runs pickup in dir and returns its output.
func (e *env) pickupIn(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command(e.bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("pickup %s: %w: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// drainAgents runs agents (next, done until next exits 3) in each of
// dirs and returns how many sessions they claimed.
func (e *env) drainAgents(dirs []string, agents int, env []string) (int, error) {
	places := make([]drainPlace, len(dirs))
	for i, dir := range dirs {
		places[i] = drainPlace{dir, env}
	}
	return e.drain(places, agents, "c")
}

// drainPlace is where one group of drain agents runs pickup: a directory
// and the environment (which names the board).
type drainPlace struct {
	dir string
	env []string
}

// drain runs agents (next, done until next exits 3) in each place, owned
// as <ownerPrefix><place>a<agent>, and returns how many sessions they
// claimed and the first error other than next's exit 3.
func (e *env) drain(places []drainPlace, agents int, ownerPrefix string) (int, error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	claims := 0
	var first error
	for i, p := range places {
		for j := range agents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner := fmt.Sprintf("%s%da%d", ownerPrefix, i, j)
				for {
					out, err := e.pickupIn(p.dir, p.env, "--owner", owner, "next", "--json")
					if err != nil {
						var ee *exec.ExitError
						if !errors.As(err, &ee) || ee.ExitCode() != 3 {
							mu.Lock()
							first = cmpOr(first, err)
							mu.Unlock()
						}
						return
					}
					var s struct{ ID string }
					_ = json.Unmarshal([]byte(out), &s)
					if _, err := e.pickupIn(p.dir, p.env, "--owner", owner, "done", s.ID); err != nil {
						mu.Lock()
						first = cmpOr(first, err)
						mu.Unlock()
						return
					}
					mu.Lock()
					claims++
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	return claims, first
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// sharedBoard measures a shared board against a git daemon on loopback:
// one claim (`pickup next`, no contention; median and p99), then 4 clones
// × 4 agent processes draining 200 sessions made from all 4 clones (wall
// time, claims/s, lost races retried, pushes per claim), and the same
// drain of one local board as the floor, in the same run. fsync is on.
func sharedBoard(e *env) (Row, error) {
	const clones, agents, n, single = 4, 4, 200, 40
	row := Row{What: fmt.Sprintf("shared board over git daemon on loopback, fsync on: one `pickup next` (median, p99 of %d); %d clones × %d agents drain %d (wall, claims/s, lost races retried, pushes/claim); floor: the same drain on one local board", single, clones, agents, n),
		Target: "p50 ≤ 100 ms; drain ≤ 30 s"}
	dir := e.dir("shared")
	defer e.remove(dir)
	r, err := startSharedRemote(dir)
	if err != nil {
		return row, err
	}
	defer r.stop()
	stats := filepath.Join(dir, "stats")
	env := sharedEnv("PICKUP_SHARED_STATS=" + stats)
	var dirs []string
	for i := range clones {
		d, err := e.sharedClone(r, fmt.Sprintf("c%d", i), env)
		if err != nil {
			return row, err
		}
		dirs = append(dirs, d)
	}
	// One claim at a time.
	for i := range single {
		if _, err := e.pickupIn(dirs[0], env, "new", "--title", fmt.Sprintf("single %d", i)); err != nil {
			return row, err
		}
	}
	var took []time.Duration
	for range single {
		t0 := time.Now()
		if _, err := e.pickupIn(dirs[0], env, "--owner", "solo", "next"); err != nil {
			return row, err
		}
		took = append(took, time.Since(t0))
	}
	slices.Sort(took)
	p50, p99 := percentile(took, 0.5), percentile(took, 0.99)
	// The drain: sessions from all clones, then 16 agents.
	var wg sync.WaitGroup
	errs := make([]error, clones)
	for i, d := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range n / clones {
				if _, err := e.pickupIn(d, env, "new", "--title", fmt.Sprintf("c%d task %d", i, k)); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return row, err
		}
	}
	_ = os.Remove(stats)
	t0 := time.Now()
	claims, err := e.drainAgents(dirs, agents, env)
	wall := time.Since(t0)
	if err != nil {
		return row, err
	}
	var ok, refused, lost int
	for _, l := range lines(stats) {
		switch {
		case strings.HasPrefix(l, "ok"):
			ok++
		case l == "refused":
			refused++
		case l == "lost":
			lost++
		}
	}
	// The floor: the same drain, one local board.
	local := filepath.Join(dir, "local")
	if err := seedBoard(e, local, n); err != nil {
		return row, err
	}
	lenv := append(withoutPickupVars(), "PICKUP_DIR="+local)
	t1 := time.Now()
	lclaims, err := e.drainAgents(slices.Repeat([]string{dir}, clones), agents, lenv)
	floor := time.Since(t1)
	if err != nil {
		return row, err
	}
	row.Figure = fmt.Sprintf("one next: p50 %s, p99 %s; drain: %d claims in %.1f s = %.1f claims/s, %d lost races retried, %.2f pushes/claim (%d accepted, %d refused); floor (local board): %d claims in %.1f s = %.0f claims/s; shared/floor %.1f×",
		ms(p50), ms(p99), claims, wall.Seconds(), float64(claims)/wall.Seconds(), lost, float64(ok+refused)/float64(max(claims, 1)), ok, refused,
		lclaims, floor.Seconds(), float64(lclaims)/floor.Seconds(), wall.Seconds()/floor.Seconds())
	row.Result = passIf(p50 <= 100*time.Millisecond && wall <= 30*time.Second && claims == n && lclaims == n)
	return row, nil
}
