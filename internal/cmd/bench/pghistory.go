package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// The history of a PostgreSQL board in git: the bench's boards live in
// clones of one bare repository whose post-receive hook logs each push,
// so the drain counts the pushes its history made (want at most one per
// batch interval, the default history_every).

// historyRemote is a bare repository that logs each push it receives.
type historyRemote struct {
	bare, log string
}

func newHistoryRemote(dir string) (*historyRemote, error) {
	r := &historyRemote{bare: filepath.Join(dir, "remote.git"), log: filepath.Join(dir, "pushes.log")}
	if out, err := exec.Command("git", "init", "-q", "--bare", r.bare).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git init --bare: %v: %s", err, out)
	}
	hook := "#!/bin/sh\ncat > /dev/null\ndate +%s%N >> " + strconv.Quote(r.log) + "\n"
	if err := os.WriteFile(filepath.Join(r.bare, "hooks", "post-receive"), []byte(hook), 0o755); err != nil {
		return nil, err
	}
	return r, nil
}

// clone makes a clone of the remote in dir and returns the board folder
// inside it.
func (r *historyRemote) clone(dir string) (string, error) {
	if out, err := exec.Command("git", "clone", "-q", "file://"+r.bare, dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("git clone: %v: %s", err, out)
	}
	return filepath.Join(dir, "board"), nil
}

// pushesBetween counts the pushes that landed from t0 to t1.
func (r *historyRemote) pushesBetween(t0, t1 time.Time) int {
	n := 0
	for _, line := range lines(r.log) {
		ns, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
		if err == nil && ns >= t0.UnixNano() && ns <= t1.UnixNano() {
			n++
		}
	}
	return n
}

// benchHistoryEvery is the bench's history_every: shorter than the
// default (1m) so that a drain of seconds makes several batches.
const benchHistoryEvery = 5 * time.Second

// useInterval sets the board's history_every.
func useInterval(board string) error {
	f, err := os.OpenFile(filepath.Join(board, sessions.ConfigFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "history_every: %s\n", benchHistoryEvery)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// setHistory sets history: in each board's config.yaml (init wrote
// history: origin).
func setHistory(boards []string, to string) error {
	for _, b := range boards {
		path := filepath.Join(b, sessions.ConfigFile)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(string(data), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "history:") {
				lines[i] = "history: " + to
			}
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// transitions counts the transitions the branch's commits list.
func (r *historyRemote) transitions() int {
	out, err := exec.Command("git", "--git-dir", r.bare, "log", "--format=%B", "pickup").Output()
	if err != nil {
		return -1
	}
	return strings.Count(string(out), " → ")
}

// historyFigure says how many pushes the drain made, per minute, against
// what the interval allows; ok when within it.
func historyFigure(pushes int, wall time.Duration) (string, bool) {
	every := benchHistoryEvery
	allowed := int(math.Ceil(wall.Seconds()/every.Seconds())) + 1 // one per interval, and one at the start
	return fmt.Sprintf("history: %d pushes to the git remote during the drain = %.1f/min (history_every %s: at most %d, %.0f/min)",
		pushes, float64(pushes)/wall.Minutes(), every, allowed, time.Minute.Seconds()/every.Seconds()), pushes <= allowed
}
