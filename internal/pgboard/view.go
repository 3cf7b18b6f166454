package pgboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// The view: what this board directory shows of the database, kept in
// .pickup/pg-view under the mirror lock (see lock).

// seen is what this board directory shows of one row of the database.
type seen struct {
	Place   string `json:"p"` // "todo", "doing/alice", ...
	Version int64  `json:"v"`
	Fence   int64  `json:"f,omitempty"`
}

func (s *Board) viewPath() string { return filepath.Join(s.B.RuntimeDir(), "pg-view") }

// legacyViewPath is where pickups before the line format kept the view
// (JSON); it is read when there is no view in the line format.
func (s *Board) legacyViewPath() string { return filepath.Join(s.B.RuntimeDir(), "pg-view.json") }

// view is what this board directory shows of the database: each row's
// place and version, and the horizon of the last Refresh (Through): every
// row written by a transaction before it is shown here at least at the
// version that Refresh saw, so the next Refresh reads only the rows
// written from it on.
type view struct {
	Through int64           `json:"through"`
	Rows    map[string]seen `json:"rows"`
	legacy  bool            // read from legacyViewPath
}

// viewHeader begins the view file; a line per row follows: id, place,
// version and fencing token, separated by spaces (ids and owners have
// none). Every command reads it and most write it, so it is a format
// read without a parser: JSON took a millisecond a command at 400
// sessions.
const viewHeader = "pickup-pg-view 1 "

// parseView reads a view in the line format.
func parseView(data []byte) (*view, bool) {
	first, rest, _ := bytes.Cut(data, []byte{'\n'})
	through, ok := bytes.CutPrefix(first, []byte(viewHeader))
	if !ok {
		return nil, false
	}
	v := &view{Rows: make(map[string]seen, bytes.Count(rest, []byte{'\n'}))}
	var err error
	if v.Through, err = strconv.ParseInt(string(through), 10, 64); err != nil {
		return nil, false
	}
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		f := bytes.Fields(line)
		if len(f) != 4 {
			return nil, false
		}
		version, err1 := strconv.ParseInt(string(f[2]), 10, 64)
		fence, err2 := strconv.ParseInt(string(f[3]), 10, 64)
		if err1 != nil || err2 != nil {
			return nil, false
		}
		v.Rows[string(f[0])] = seen{Place: string(f[1]), Version: version, Fence: fence}
	}
	return v, true
}

// loadView reads the view (empty if there is none); the lock must be held
// for a view that will be saved. A view of a JSON format (older pickups)
// is read too; the first one (the rows alone) has no horizon, and the
// next Refresh reads every row.
func (s *Board) loadView() *view {
	if data, err := fsx.ReadRegular(s.viewPath()); err == nil {
		if v, ok := parseView(data); ok {
			return v
		}
	}
	v := &view{}
	if data, err := fsx.ReadRegular(s.legacyViewPath()); err == nil {
		v.legacy = true
		if json.Unmarshal(data, v) != nil || v.Rows == nil {
			*v = view{legacy: true}
			_ = json.Unmarshal(data, &v.Rows)
		}
	}
	if v.Rows == nil {
		v.Rows = map[string]seen{}
	}
	return v
}

// viewThrough is the view's horizon, read without the lock and without
// reading its rows.
func (s *Board) viewThrough() int64 {
	f, err := fsx.OpenRegular(s.viewPath())
	if err != nil {
		return s.loadView().Through // none yet, or a JSON one
	}
	defer f.Close()
	buf := make([]byte, 64)
	n, _ := io.ReadFull(f, buf)
	first, _, _ := bytes.Cut(buf[:n], []byte{'\n'})
	through, ok := bytes.CutPrefix(first, []byte(viewHeader))
	if !ok {
		return 0
	}
	t, _ := strconv.ParseInt(string(through), 10, 64)
	return t
}

// saveView replaces the view; the lock must be held. It is not synced: a
// view lost in a crash (an older one, or none) makes Refresh read and
// compare more rows, and a row that it shows older than it is here is
// found in place (or moved) at its newer version.
func (s *Board) saveView(v *view) error {
	data := make([]byte, 0, 64+len(v.Rows)*64)
	data = append(data, viewHeader...)
	data = strconv.AppendInt(data, v.Through, 10)
	data = append(data, '\n')
	for id, r := range v.Rows {
		if r.Place == "" || strings.ContainsAny(id+r.Place, " \n") {
			continue // not a place of the board: Refresh shows it again
		}
		data = append(data, id...)
		data = append(data, ' ')
		data = append(data, r.Place...)
		data = append(data, ' ')
		data = strconv.AppendInt(data, r.Version, 10)
		data = append(data, ' ')
		data = strconv.AppendInt(data, r.Fence, 10)
		data = append(data, '\n')
	}
	tmp := s.viewPath() + "." + strconv.Itoa(os.Getpid())
	_ = os.Remove(tmp)
	if err := fsx.WriteNew(tmp, data, 0o644, false); err != nil {
		return fmt.Errorf("postgres board: view: %w", err)
	}
	if err := os.Rename(tmp, s.viewPath()); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("postgres board: view: %w", err)
	}
	if v.legacy {
		_ = os.Remove(s.legacyViewPath())
		v.legacy = false
	}
	return nil
}
