package postgres

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
)

// setAsideCopies (pickup sync) moves to conflicts/ every copy of a session
// found elsewhere than where the database has it, when this directory's
// view is current for that session (it shows the row's version, at the
// row's place) and the file is there too: the mirror then has it twice,
// and the place the database names is the one to keep. A transition is a
// rename, so it never makes a second copy, and one in flight moves the
// only copy (the database's place then lacks it and nothing is touched);
// the copies are moved, never removed, as doctor --fix does (with its op,
// which doctor's history check reads as a discarded copy). The lock is
// taken here. It returns how many copies it moved.
func (s *Board) setAsideCopies(rows []Row) (int, error) {
	unlock, err := s.lock()
	if err != nil {
		return 0, err
	}
	defer unlock()
	files, err := s.sessionFiles()
	if err != nil {
		return 0, err
	}
	view := s.loadView()
	moved := 0
	for _, r := range rows {
		paths := files[r.ID]
		if len(paths) < 2 {
			continue
		}
		v := view.row(r.ID)
		want := s.rowPath(r)
		if v.Version != r.Version || v.Place != place(r.State, r.Owner) || !exists(want) {
			continue // not current here, or not where the database has it
		}
		for _, p := range paths {
			if p == want {
				continue
			}
			if err := s.setAside(r, p, want); err != nil {
				return moved, err
			}
			moved++
		}
	}
	return moved, nil
}

// sessionFiles maps each session id to its files on this board: todo/,
// doing/*/, done/, failed/ (one directory read each).
func (s *Board) sessionFiles() (map[string][]string, error) {
	out := map[string][]string{}
	add := func(dir string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		for _, e := range entries {
			id, ok := strings.CutSuffix(e.Name(), ".md")
			if ok && e.Type().IsRegular() && sessions.ValidateID(id) == nil {
				out[id] = append(out[id], filepath.Join(dir, e.Name()))
			}
		}
		return nil
	}
	if err := add(s.B.StateDir(sessions.Todo, "")); err != nil {
		return nil, err
	}
	owners, err := s.B.Owners()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, o := range owners {
		if err := add(s.B.StateDir(sessions.Doing, o)); err != nil {
			return nil, err
		}
	}
	for _, st := range []sessions.State{sessions.Done, sessions.Failed} {
		if err := add(s.B.StateDir(st, "")); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// setAside moves copy (a file of session r other than want) to
// conflicts/<id>.<state>[.<owner>][.n].md, without replacing anything.
func (s *Board) setAside(r Row, copy, want string) error {
	if err := s.B.CheckDir(sessions.ConflictsDirName); err != nil {
		return fmt.Errorf("postgres board: %w", err)
	}
	dir := filepath.Join(s.B.Dir, sessions.ConflictsDirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("postgres board: %w", err)
	}
	suffix := strings.ReplaceAll(s.rel(filepath.Dir(copy)), "/", ".")
	for n := 1; n < 1000; n++ {
		name := fmt.Sprintf("%s.%s.md", r.ID, suffix)
		if n > 1 {
			name = fmt.Sprintf("%s.%s.%d.md", r.ID, suffix, n)
		}
		dst := filepath.Join(dir, name)
		err := fsx.RenameNoReplace(copy, dst)
		switch {
		case errors.Is(err, fs.ErrExist):
			continue
		case errors.Is(err, fs.ErrNotExist):
			return nil // gone meanwhile
		case err != nil:
			return fmt.Errorf("postgres board: set aside %s: %w", copy, err)
		}
		reason := fmt.Sprintf("pickup sync: a second copy; the database (%s) has it in %s, kept %s", s.URL, place(r.State, r.Owner), s.rel(want))
		_ = s.B.AppendEvent(sessions.Event{Op: "doctor", ID: r.ID, Src: copy, Dst: dst, Reason: reason})
		return nil
	}
	return fmt.Errorf("postgres board: set aside %s: too many copies in %s", copy, dir)
}
