package postgres

// Placing a session's file where the database has it: the one step of
// the mirror that moves or writes session files (Refresh, a lost
// transition), and the line each such move leaves in events.log.

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
)

// exists reports whether path is a regular file.
func exists(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.Mode().IsRegular()
}

// placeRow puts session r where the database has it, from the file at
// from ("" for none) if that exists, with r's content, and records it in
// the view; the lock must be held. onlyFrom: if from has gone meanwhile
// (a local transition moved it), leave the session to that transition's
// arbiter.
func (s *Board) placeRow(r Row, from string, onlyFrom bool) error {
	v := s.loadView()
	placed, err := s.placeRowIn(v, r, from, onlyFrom)
	if err != nil || !placed {
		return err
	}
	return s.saveView(v)
}

// placeRowIn is placeRow recording it in v, which the caller saves; placed
// reports whether the session was put in place (not left to a local
// transition).
func (s *Board) placeRowIn(v *view, r Row, from string, onlyFrom bool) (placed bool, err error) {
	want := s.rowPath(r)
	if err := s.B.CheckDir(filepath.Dir(s.rel(want))); err != nil {
		return false, fmt.Errorf("postgres board: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
		return false, fmt.Errorf("postgres board: %w", err)
	}
	if r.State == string(sessions.Todo) {
		// After the file is in place: a listing that began in between
		// must not stamp itself fresh without it (sessions.Board.PeekFresh).
		defer s.B.MarkChanged(sessions.Todo)
	}
	moved, wrote := false, false
	defer func() {
		if moved || wrote {
			s.logMirrored(r, from, moved)
		}
	}()
	if shown := v.row(r.ID); shown.Version > r.Version {
		// r is older than what this board already shows (a lost
		// transition's answer, overtaken by a Refresh of another
		// process here): never put the session back by it.
		return false, s.placeStale(r, shown, from)
	}
	if from != "" && from != want && !exists(from) && onlyFrom {
		return false, nil // moved by a local transition meanwhile: its arbiter decides
	}
	if from != "" && from != want && exists(from) {
		err := fsx.RenameNoReplace(from, want)
		switch {
		case err == nil:
			moved = true
		case errors.Is(err, fs.ErrExist):
			_ = os.Remove(from) // the right place has it already
		case errors.Is(err, fs.ErrNotExist):
			if onlyFrom {
				return false, nil // moved by a local transition meanwhile
			}
		default:
			return false, fmt.Errorf("postgres board: move %s: %w", from, err)
		}
	}
	if !moved && !exists(want) {
		err := fsx.WriteNew(want, r.Body, 0o644, !s.B.NoSync)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("postgres board: write %s: %w", want, err)
		}
		wrote = err == nil
	}
	if r.Body != nil {
		if old, err := fsx.ReadRegular(want); err == nil && !bytes.Equal(old, r.Body) {
			tmp := filepath.Join(filepath.Dir(want), "."+filepath.Base(want)+".md"+strconv.Itoa(os.Getpid()))
			_ = os.Remove(tmp)
			if err := fsx.WriteNew(tmp, r.Body, 0o644, !s.B.NoSync); err != nil {
				return false, fmt.Errorf("postgres board: write %s: %w", want, err)
			}
			if err := os.Rename(tmp, want); err != nil {
				_ = os.Remove(tmp)
				return false, fmt.Errorf("postgres board: write %s: %w", want, err)
			}
		}
	}
	if v.row(r.ID).Version < r.Version {
		v.set(r.ID, seen{Place: place(r.State, r.Owner), Version: r.Version, Fence: r.Fence})
	}
	return true, nil
}

// placeStale handles a row r older than the view's v: the session's file
// at from (a lost transition's) goes where the view has it, which the
// newer row put there; if that place has it already, from is an extra
// copy of a transition the database refused, and is removed. The lock
// must be held.
func (s *Board) placeStale(r Row, v seen, from string) error {
	newer := s.placePath(v.Place, r.ID)
	if from == "" || newer == "" || from == newer || !exists(from) {
		return nil
	}
	if err := s.B.CheckDir(filepath.Dir(s.rel(newer))); err != nil {
		return fmt.Errorf("postgres board: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(newer), 0o755); err != nil {
		return fmt.Errorf("postgres board: %w", err)
	}
	err := fsx.RenameNoReplace(from, newer)
	switch {
	case err == nil:
		st, owner, _ := parsePlace(v.Place)
		if st == string(sessions.Todo) {
			s.B.MarkChanged(sessions.Todo) // see placeRow
		}
		s.logMirrored(Row{ID: r.ID, State: st, Owner: owner, LastOp: "sync"}, from, true)
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, fs.ErrExist):
		_ = os.Remove(from) // the newer place has it already
		return nil
	}
	return fmt.Errorf("postgres board: move %s: %w", from, err)
}

// rel is path relative to the board, '/'-separated.
func (s *Board) rel(path string) string {
	r, err := filepath.Rel(s.B.Dir, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

// placePath is the file of a place as events name it.
func (s *Board) placePath(p, id string) string {
	st, owner, ok := parsePlace(p)
	if !ok || st == "" {
		return ""
	}
	return s.B.Path(sessions.State(st), owner, id)
}

// logMirrored appends to this board's event log the transition that put
// session r where the database has it, made on another board (or by the
// database's answer to a transition lost here): the history here then
// ends where the session is (pickup doctor checks that), and pickup log
// and pickup board show what other machines did. Its time is when this
// board saw it; the database's pickup_events has the exact one.
func (s *Board) logMirrored(r Row, from string, moved bool) {
	src := ""
	if moved {
		src = from
	}
	op := r.LastOp
	if op == "" || op == "import" {
		op = "sync"
	}
	e := sessions.Event{Time: time.Now(), ID: r.ID, Op: op, Owner: r.LastBy,
		Reason: "made on another board", Src: src, Dst: s.rowPath(r)}
	// Unsynced: the database's pickup_events is this line's durable
	// record, and each synced line cost every board an fsync per
	// transition made anywhere.
	_ = boardhook.AppendEventUnsynced(s.B, e) // the move stands whatever became of its line
}
