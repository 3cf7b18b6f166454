package gitremote

// Every answer is what happened. A process of the clone that is killed
// while it pushes leaves its request (and maybe others' it was pushing)
// in the queue, and its move in the board directory: the next pickup
// command of the clone, whatever it is, pushes it (or, if the remote has
// settled it otherwise since, undoes it), so that the clone and the
// remote agree again; a request whose very event the remote already has
// stands (see lead). Sync and doctor compare the board with the remote's
// tip, and never say "in line" while they differ.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sys/unix"
)

// orphanAge is how old an outcome file must be before it is deemed its
// requester's, which died before reading it.
const orphanAge = time.Minute

// Pending reports whether the clone's queue under gitDir (the
// repository's common git directory) holds a request of a process that
// is gone (all: any request). It runs no git.
func Pending(gitDir string, all bool) bool {
	entries, err := os.ReadDir(filepath.Join(gitDir, "pickup", "queue"))
	if err != nil {
		return false
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".req")
		if !ok {
			continue
		}
		if all || !requesterAlive(name) {
			return true
		}
	}
	return false
}

// requesterAlive reports whether the process that queued request name
// ("<ns>-<pid>-<random>") may still be waiting for it.
func requesterAlive(name string) bool {
	parts := strings.Split(name, "-")
	if len(parts) != 3 {
		return true
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return true
	}
	return unix.Kill(pid, 0) != unix.ESRCH
}

// Flush pushes every request queued in the clone (those of processes
// killed while they waited or pushed among them) and returns once the
// queue is empty: the board here then says what the remote says.
func (s *Board) Flush(ctx context.Context) error {
	s.dropOrphanOutcomes()
	for range s.attempts() {
		if len(s.queued()) == 0 {
			return nil
		}
		unlock, err := s.lock()
		if err != nil {
			return err
		}
		wait, _ := s.lead(ctx, "")
		unlock()
		if wait > 0 {
			s.sleep(wait)
		}
	}
	return s.remoteErr("push", errors.New("the queued transitions of this clone could not be pushed"))
}

// dropOrphanOutcomes removes outcome files that no requester read.
func (s *Board) dropOrphanOutcomes() {
	entries, err := os.ReadDir(s.queueDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".res") {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > orphanAge {
			_ = os.Remove(filepath.Join(s.queueDir(), e.Name()))
		}
	}
}

// Difference is a session that the board here has elsewhere than the
// remote's tip last seen.
type Difference struct {
	ID     string   `json:"id"`
	Here   []string `json:"here"`   // board-relative directories
	Remote string   `json:"remote"` // "" not there
}

func (d Difference) String() string {
	here, remote := strings.Join(d.Here, " and "), d.Remote
	if here == "" {
		here = "nowhere"
	}
	if remote == "" {
		remote = "nowhere"
	}
	return fmt.Sprintf("%s: %s here, %s on the remote", d.ID, here, remote)
}

// Differences lists the sessions that the board directory has elsewhere
// than the remote's tip as this clone last saw it (with the clone's lock
// held: no fetch is being applied).
func (s *Board) Differences(ctx context.Context) ([]Difference, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.differences(ctx)
}

func (s *Board) differences(ctx context.Context) ([]Difference, error) {
	t, err := s.lsTree(ctx, s.readRef(ctx, refBoard))
	if err != nil {
		return nil, err
	}
	remote := map[string]string{}
	for p := range t {
		if id, _, ok := sessionPath(p); ok {
			remote[id] = filepath.ToSlash(filepath.Dir(p))
		}
	}
	here := map[string][]string{}
	for _, st := range []sessions.State{sessions.Todo, sessions.Doing, sessions.Done, sessions.Failed} {
		_ = filepath.WalkDir(filepath.Join(s.B.Dir, string(st)), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if id, _, ok := sessionPath(s.rel(path)); ok {
				here[id] = append(here[id], filepath.ToSlash(filepath.Dir(s.rel(path))))
			}
			return nil
		})
	}
	var out []Difference
	for id, at := range here {
		if len(at) != 1 || at[0] != remote[id] {
			out = append(out, Difference{ID: id, Here: at, Remote: remote[id]})
		}
	}
	for id, at := range remote {
		if _, ok := here[id]; !ok {
			out = append(out, Difference{ID: id, Remote: at})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// InLine flushes the clone's queue and returns the sessions that the
// board here still has elsewhere than the remote's tip, looked at twice a
// moment apart: a transition that another process has just made here and
// is about to queue is not a difference.
func (s *Board) InLine(ctx context.Context) ([]Difference, error) {
	var diffs []Difference
	for try := range 3 {
		if err := s.Flush(ctx); err != nil {
			return nil, err
		}
		var err error
		if diffs, err = s.Differences(ctx); err != nil || len(diffs) == 0 {
			return diffs, err
		}
		if try < 2 {
			s.sleep(200 * time.Millisecond)
		}
	}
	return diffs, nil
}
