package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
)

// Join puts the sessions of this board directory that the database does
// not have into it (a board that becomes shared, or a todo/*.md made by
// hand: pickup sync), then brings the directory in line with the
// database. It returns how many sessions were new to the database and how
// many it has.
func (s *Board) Join(ctx context.Context, first bool) (imported, total int, err error) {
	rows, err := s.localRows()
	if err != nil {
		return 0, 0, err
	}
	for try := 0; len(rows) > 0 && try < 3; try++ {
		s.mu.Lock()
		s.opened = nil // read before the import
		s.mu.Unlock()
		res, err := s.call("import sessions", Request{Op: "import", Sessions: rows})
		if err != nil {
			return imported, 0, err
		}
		imported += res.Count
		// Sessions whose ids another board made too (before sharing,
		// ids have no board suffix): renamed here with this board's
		// suffix and imported again, never overwritten.
		if rows, err = s.renameConflicts(rows, res.IDs); err != nil {
			return imported, 0, err
		}
	}
	if _, err := s.refresh(first); err != nil {
		return imported, 0, err
	}
	res, err := s.call("read the board", Request{Op: "state"})
	if err != nil {
		return imported, 0, err
	}
	if _, err := s.setAsideCopies(res.Rows); err != nil {
		return imported, len(res.Rows), err
	}
	return imported, len(res.Rows), nil
}

// localRows lists this directory's session files that the view does not
// know (every one on a board that was not shared).
func (s *Board) localRows() ([]Row, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	view := s.loadView()
	unlock()
	var rows []Row
	add := func(st sessions.State, owner string) error {
		dir := s.B.StateDir(st, owner)
		entries, err := os.ReadDir(dir)
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		for _, e := range entries {
			id, ok := strings.CutSuffix(e.Name(), ".md")
			if !ok || !e.Type().IsRegular() || sessions.ValidateID(id) != nil {
				continue
			}
			if _, known := view.get(id); known {
				continue
			}
			body, err := fsx.ReadRegular(filepath.Join(dir, e.Name()))
			if err != nil {
				continue // moved meanwhile
			}
			rows = append(rows, Row{ID: id, State: string(st), Owner: owner, Body: body})
		}
		return nil
	}
	if err := add(sessions.Todo, ""); err != nil {
		return nil, err
	}
	owners, err := s.B.Owners()
	if err != nil {
		return nil, err
	}
	for _, o := range owners {
		if err := add(sessions.Doing, o); err != nil {
			return nil, err
		}
	}
	for _, st := range []sessions.State{sessions.Done, sessions.Failed} {
		if err := add(st, ""); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// renameConflicts gives the sessions of rows named in ids a new id made
// with this board's suffix (renaming their files here), and returns them.
func (s *Board) renameConflicts(rows []Row, ids []string) ([]Row, error) {
	var out []Row
	for _, id := range ids {
		i := slices.IndexFunc(rows, func(r Row) bool { return r.ID == id })
		if i < 0 {
			continue
		}
		r := rows[i]
		for n := 1; ; n++ {
			newID := fmt.Sprintf("%s.%s", id, boardhook.IDSuffixOf(s.B))
			if n > 1 {
				newID = fmt.Sprintf("%s-%d", newID, n)
			}
			if sessions.ValidateID(newID) != nil || n > 50 {
				return nil, fmt.Errorf("postgres board: session %s: another board has a different session with this id, and no new id fits", id)
			}
			err := fsx.RenameNoReplace(s.rowPath(r), s.rowPath(Row{ID: newID, State: r.State, Owner: r.Owner}))
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("postgres board: rename %s: %w", id, err)
			}
			fmt.Fprintf(os.Stderr, "pickup: warning: session %s: another board has a different session with this id; this board's is now %s\n", id, newID)
			r.ID = newID
			out = append(out, r)
			break
		}
	}
	return out, nil
}
