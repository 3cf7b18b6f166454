package pgboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pickup-dev/pickup/internal/fsx"
	"golang.org/x/sys/unix"
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

	// What the file holds: its row and horizon lines (0: no file of
	// the line format) and horizon as read or last saved, and the rows
	// set since (saveView appends only those).
	lines       int
	torn        bool // its last line lacks its newline (a write cut short)
	fileThrough int64
	touched     []string
}

// set records that this board shows session id as r.
func (v *view) set(id string, r seen) {
	if old, ok := v.Rows[id]; ok && old == r {
		return
	}
	v.Rows[id] = r
	v.touched = append(v.touched, id)
}

// The line format. viewHeader begins the file, with the horizon; a line
// per row follows: id, place, version and fencing token, separated by
// spaces (ids and owners have none). A save appends the rows set since the
// file was read, and the new horizon as a line "@through N"; a row's
// newest line counts, and the greatest horizon. A save rewrites the
// file when the appended lines outnumber the rows, or when its last line
// lacks its newline (a write cut short, which the next line must not
// continue). Every command reads the
// view and most save it, many times a second in a busy fleet: appending a
// line is one write(2), where replacing the file made a file and renamed
// it twice (a tenth of a command's time in a 16-agent drain), and JSON
// took a millisecond a command to parse at 400 sessions.
//
// Version 1 had no appended lines; older pickups read a version 2 file as
// no view (they read every row once, then save one of their own).
const (
	viewHeader   = "pickup-pg-view 2 "
	viewHeaderV1 = "pickup-pg-view 1 "
	throughLine  = "@through"
)

// parseView reads a view in the line format. A last line without its
// newline (an append read while it is written) is left out. It is on
// every command's path, twice: it splits the lines by hand and shares
// the strings of places (a handful for the whole board).
func parseView(data []byte) (*view, bool) {
	first, rest, _ := bytes.Cut(data, []byte{'\n'})
	through, ok := bytes.CutPrefix(first, []byte(viewHeader))
	if !ok {
		if through, ok = bytes.CutPrefix(first, []byte(viewHeaderV1)); !ok {
			return nil, false
		}
	}
	v := &view{Rows: make(map[string]seen, bytes.Count(rest, []byte{'\n'}))}
	if v.Through, ok = parseInt(through); !ok {
		return nil, false
	}
	places := map[string]string{}
	var f [5][]byte
	for len(rest) > 0 {
		line, after, complete := bytes.Cut(rest, []byte{'\n'})
		if !complete {
			v.torn = true
			break
		}
		rest = after
		v.lines++
		n := 0
		for len(line) > 0 && n < len(f) {
			field, tail, _ := bytes.Cut(line, []byte{' '})
			f[n], line, n = field, tail, n+1
		}
		if n == 2 && string(f[0]) == throughLine {
			t, ok := parseInt(f[1])
			if !ok {
				return nil, false
			}
			v.Through = max(v.Through, t)
			continue
		}
		if n != 4 || len(f[0]) == 0 || len(f[1]) == 0 {
			return nil, false
		}
		version, ok1 := parseInt(f[2])
		fence, ok2 := parseInt(f[3])
		if !ok1 || !ok2 {
			return nil, false
		}
		if cur, ok := v.Rows[string(f[0])]; ok && version < cur.Version {
			continue
		}
		p, ok := places[string(f[1])]
		if !ok {
			p = string(f[1])
			places[p] = p
		}
		v.Rows[string(f[0])] = seen{Place: p, Version: version, Fence: fence}
	}
	v.fileThrough = v.Through
	v.lines = max(v.lines, 1) // a file of the line format, if empty
	return v, true
}

// parseInt parses a non-negative decimal without allocating.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
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

// viewThrough is the view's horizon, read without the lock: the last
// horizon line's, else the header's.
func (s *Board) viewThrough() int64 {
	data, err := fsx.ReadRegular(s.viewPath())
	if err != nil {
		return s.loadView().Through // none yet, or a JSON one
	}
	if i := bytes.LastIndex(data, []byte("\n"+throughLine+" ")); i >= 0 {
		line, _, complete := bytes.Cut(data[i+1:], []byte{'\n'})
		f := bytes.Fields(line)
		if complete && len(f) == 2 {
			if t, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
				return t
			}
		}
	}
	v, ok := parseView(data)
	if !ok {
		return 0
	}
	return v.Through
}

// saveView saves v; the lock must be held. It appends the rows set since
// v was read and its new horizon, or replaces the file when there is none
// of the line format or the appended lines would outnumber the rows.
//
// It is not synced: a view lost in a crash (an older one, or none) makes
// Refresh read and compare more rows, and a row that it shows older than
// it is here is found in place (or moved) at its newer version.
func (s *Board) saveView(v *view) error {
	if len(v.touched) == 0 && v.Through == v.fileThrough && v.lines > 0 && !v.legacy {
		return nil
	}
	if v.lines > 0 && !v.legacy && !v.torn && v.lines+len(v.touched)+1 <= 2*len(v.Rows)+64 {
		data := make([]byte, 0, 64*(len(v.touched)+1))
		n := 0
		done := make(map[string]bool, len(v.touched))
		for _, id := range v.touched {
			if done[id] {
				continue
			}
			done[id] = true
			if line, ok := appendRow(nil, id, v.Rows[id]); ok {
				data = append(data, line...)
				n++
			}
		}
		if v.Through != v.fileThrough {
			data = append(data, throughLine+" "...)
			data = strconv.AppendInt(data, v.Through, 10)
			data = append(data, '\n')
			n++
		}
		err := appendFile(s.viewPath(), data)
		if err == nil {
			v.lines += n
			v.fileThrough = v.Through
			v.touched = v.touched[:0]
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("postgres board: view: %w", err)
		}
		// Removed by hand: write it whole.
	}
	data := make([]byte, 0, 64+len(v.Rows)*64)
	data = append(data, viewHeader...)
	data = strconv.AppendInt(data, v.Through, 10)
	data = append(data, '\n')
	lines := 0
	for id, r := range v.Rows {
		var ok bool
		if data, ok = appendRow(data, id, r); ok {
			lines++
		}
	}
	tmp := s.viewPath() + "." + strconv.Itoa(os.Getpid())
	_ = os.Remove(tmp)
	if err := writeExclusive(tmp, data); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("postgres board: view: %w", err)
	}
	if err := os.Rename(tmp, s.viewPath()); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("postgres board: view: %w", err)
	}
	v.lines, v.fileThrough, v.touched, v.torn = max(lines, 1), v.Through, v.touched[:0], false
	if v.legacy {
		_ = os.Remove(s.legacyViewPath())
		v.legacy = false
	}
	return nil
}

// appendRow appends row r's line to data; ok is false for a row that is
// not a place of the board (Refresh shows it again).
func appendRow(data []byte, id string, r seen) ([]byte, bool) {
	if r.Place == "" || id == "" || strings.ContainsAny(id+r.Place, " \n") {
		return data, false
	}
	data = append(data, id...)
	data = append(data, ' ')
	data = append(data, r.Place...)
	data = append(data, ' ')
	data = strconv.AppendInt(data, r.Version, 10)
	data = append(data, ' ')
	data = strconv.AppendInt(data, r.Fence, 10)
	return append(data, '\n'), true
}

// appendFile appends data to the existing file path in one write.
func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// writeExclusive writes a new file (never an existing one, nor through a
// link), unsynced.
func writeExclusive(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}
