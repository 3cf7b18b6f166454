package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// --- ownership: started the way users start pickup -------------------------

// drainScript is an executable script with a shebang, as issue reports
// found it: 8 background subshell loops, each claiming through a command
// substitution and a pipeline into jq. With "pid" as its argument each
// loop names itself with --pid (its own $BASHPID), the explicit way that
// never depended on pickup finding its invoker.
const drainScript = `#!/bin/bash
for i in 1 2 3 4 5 6 7 8; do
  ( me=$BASHPID; pid=(); [ "$1" = pid ] && pid=(--pid "$me")
    while id=$("$PICKUP" --owner "w$i" "${pid[@]}" next --json 2>/dev/null | jq -r .id); [ -n "$id" ] && [ "$id" != null ]; do
      echo "$id" >> "$OUT/claims"
      "$PICKUP" --owner "w$i" done "$id" >/dev/null 2>&1 || echo "$?" >> "$OUT/errors"
    done ) &
done
wait
`

// scriptDrain drains a board of 400 sessions with drainScript, as it is and
// with --pid, and reports claims, distinct sessions, reaps and failed dones
// (want 400 / 400 / 0 / 0) and the wall time of each. fsync is on.
func scriptDrain(e *env) (Row, error) {
	const n = 400
	row := Row{What: fmt.Sprintf("#!/bin/bash script, 8 subshell loops $(pickup next --json | jq) + done over %d sessions, fsync on: claims/distinct/reaps/failed done, wall time; then the same with --pid", n), Target: fmt.Sprintf("%d/%d/0/0", n, n)}
	if _, err := exec.LookPath("jq"); err != nil {
		return row, fmt.Errorf("script-drain needs jq: %w", err)
	}
	var figs []string
	ok := true
	for _, mode := range []string{"", "pid"} {
		dir := e.dir("script-drain" + mode)
		board := filepath.Join(dir, "board")
		if err := seedBoard(e, board, n); err != nil {
			return row, err
		}
		script := filepath.Join(dir, "drain.sh")
		if err := os.WriteFile(script, []byte(drainScript), 0o755); err != nil {
			return row, err
		}
		cmd := exec.Command(script, mode)
		cmd.Dir = dir
		cmd.Env = append(withoutPickupVars(), "PICKUP="+e.bin, "PICKUP_DIR="+board, "OUT="+dir)
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		wall := time.Since(t0)
		if err != nil {
			return row, fmt.Errorf("%s %s: %v: %s", script, mode, err, out)
		}
		claims := lines(filepath.Join(dir, "claims"))
		distinct := len(slices.Compact(slices.Sorted(slices.Values(claims))))
		failed := len(lines(filepath.Join(dir, "errors")))
		log, _ := os.ReadFile(filepath.Join(board, "events.log"))
		reaps := bytes.Count(log, []byte(`"op":"reap"`))
		label := "plain"
		if mode == "pid" {
			label = "--pid"
		}
		figs = append(figs, fmt.Sprintf("%s: %d/%d/%d/%d in %s", label, len(claims), distinct, reaps, failed, ms(wall)))
		ok = ok && len(claims) == n && distinct == n && reaps == 0 && failed == 0
		e.remove(dir)
	}
	row.Figure = strings.Join(figs, "; ")
	row.Result = passIf(ok)
	return row, nil
}

// killRecover times, 20 times, from kill -9 of an owner's process (a real
// program holding one claim) to another owner's `pickup next` having
// claimed that session, next to an empty Go program's time in the same run.
func killRecover(e *env) (Row, error) {
	const rounds = 20
	row := Row{What: fmt.Sprintf("kill -9 of a live owner to another owner's next holding its claim, %d rounds, fsync on", rounds), Result: "INFO"}
	dir := e.dir("kill-recover")
	board := filepath.Join(dir, "board")
	if err := seedBoard(e, board, 0); err != nil {
		return row, err
	}
	defer e.remove(dir)
	pk := func(args ...string) (string, error) {
		cmd := exec.Command(e.bin, append([]string{"--dir", board}, args...)...)
		cmd.Env = withoutPickupVars()
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	var took []time.Duration
	for i := 0; i < rounds; i++ {
		id, err := pk("new", "--title", "held by a victim")
		if err != nil {
			return row, err
		}
		victim := exec.Command("sleep", "60")
		if err := victim.Start(); err != nil {
			return row, err
		}
		if _, err := pk("--owner", "victim", "--pid", strconv.Itoa(victim.Process.Pid), "claim", id); err != nil {
			_ = victim.Process.Kill()
			return row, fmt.Errorf("victim claim: %w", err)
		}
		t0 := time.Now()
		_ = victim.Process.Signal(syscall.SIGKILL)
		_ = victim.Wait()
		out, err := pk("--owner", "rescuer", "next", "--json")
		d := time.Since(t0)
		if err != nil || !strings.Contains(out, id) {
			return row, fmt.Errorf("round %d: the rescuer's first next did not get %s: %v %s", i+1, id, err, out)
		}
		took = append(took, d)
		if _, err := pk("--owner", "rescuer", "done", id); err != nil {
			return row, err
		}
	}
	slices.Sort(took)
	row.Figure = fmt.Sprintf("median %s (min %s, max %s)", ms(percentile(took, 0.5)), ms(took[0]), ms(took[len(took)-1]))
	if e.goFloor != "" {
		var floor []time.Duration
		for i := 0; i < rounds; i++ {
			r, err := runCmd(e, exec.Command(e.goFloor))
			if err != nil {
				return row, err
			}
			floor = append(floor, r.wall)
		}
		slices.Sort(floor)
		f := percentile(floor, 0.5)
		row.Figure += fmt.Sprintf(" = %.1f × an empty Go program (%s, same run)", float64(percentile(took, 0.5))/float64(f), ms(f))
	}
	return row, nil
}

// seedBoard makes a board with n sessions through the pickup binary.
func seedBoard(e *env, board string, n int) error {
	run := func(args ...string) error {
		cmd := exec.Command(e.bin, append([]string{"--dir", board}, args...)...)
		cmd.Env = withoutPickupVars()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("pickup %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("init"); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if err := run("--no-sync", "new", "--title", fmt.Sprintf("session %d", i)); err != nil {
			return err
		}
	}
	return nil
}

func withoutPickupVars() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(name, "PICKUP_") || strings.HasPrefix(name, "CLAUDE") || name == "CODEX_THREAD_ID"
	})
}

// lines returns the lines of a file, none if it does not exist.
func lines(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}
