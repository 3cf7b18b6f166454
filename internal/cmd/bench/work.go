package main

// --- 4c. pickup work drains a board ------------------------------------------
//
// Registered by wait.go's init, with the other measurements of waiting and
// working.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/pickup-dev/pickup/internal/benchkit"
	"github.com/pickup-dev/pickup/sessions"
)

// workDrain times the whole `pickup work -j N -- true` process draining a
// board of workN sessions (progress as log lines on stderr, as in a pipe),
// and checks that done/ holds every session afterwards.
func workDrain(e *env, noSync bool) (Row, error) {
	mode := syncLabel(noSync)
	row := Row{
		What:   fmt.Sprintf("pickup work -j %d -- true, %d sessions, %s (wall time of the process)", workJobs, workN, mode),
		Target: ">= 300 sessions/s",
	}
	b, err := benchkit.NewBoard(e.dir("work-drain"))
	if err != nil {
		return row, err
	}
	defer e.remove(b.Dir)
	if _, err := benchkit.Fill(b, sessions.Todo, "", 0, workN); err != nil {
		return row, err
	}
	if _, err := b.ListState(sessions.Todo, false); err != nil { // warm the cache
		return row, err
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return row, err
	}
	args := []string{"--dir", b.Dir, "--owner", "bench-work", "work", "-j", strconv.Itoa(workJobs), "--max-attempts", "1"}
	if noSync {
		args = append(args, "--no-sync")
	}
	r, err := runProc(e, append(args, "--", truePath)...)
	if err != nil {
		return row, err
	}
	done, err := os.ReadDir(b.StateDir(sessions.Done, ""))
	if err != nil {
		return row, err
	}
	if len(done) != workN {
		left, _ := filepath.Glob(filepath.Join(b.Dir, "*", "*.md"))
		return row, fmt.Errorf("after pickup work done/ holds %d sessions, want %d (%d elsewhere)", len(done), workN, len(left))
	}
	rate := float64(workN) / r.wall.Seconds()
	row.Figure = fmt.Sprintf("%s sessions/s (%s for %d; CPU %s)", count(rate), ms(r.wall), workN, ms(r.cpu))
	row.Result = passIf(rate >= 300)
	return row, nil
}
