package postgres

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
//
// A command looks up a few rows (those that changed since its board's
// last read, the one it moves), so a view read from the file is not
// parsed whole: get finds a row's lines in the file's bytes. A view of
// thousands of sessions parsed whole took most of a command's time.
type view struct {
	Through int64
	legacy  bool // read from legacyViewPath

	rows  map[string]seen // rows looked up or set; every row if whole
	whole bool            // rows has every row (no file, or parsed all)
	data  []byte          // the file's row and horizon lines as read, from the newline that ends its header

	// What the file holds: its row and horizon lines (0: no file of
	// the line format), the rows it had when last written whole, its
	// horizon as read or last saved, and the rows set since (saveView
	// appends only those).
	lines       int
	baseRows    int
	torn        bool // its last line lacks its newline (a write cut short)
	fileThrough int64
	touched     []string
}

// newView is a view of rows, with no file behind it.
func newView(through int64, rows map[string]seen) *view {
	if rows == nil {
		rows = map[string]seen{}
	}
	return &view{Through: through, rows: rows, whole: true}
}

// get is what this board shows of session id, if anything.
// A row with no place in rows is one looked up and not shown.
func (v *view) get(id string) (seen, bool) {
	if r, ok := v.rows[id]; ok || v.whole {
		return r, ok && r.Place != ""
	}
	r, ok := findRow(v.data, id)
	v.rows[id] = r
	return r, ok
}

// prefetch looks up the rows of ids in one pass over the file's lines:
// a Refresh looks up every row it read, and one pass each cost a command
// more than parsing the whole view.
func (v *view) prefetch(ids []string) {
	if v.whole || len(ids) < 2 {
		return
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		if _, ok := v.rows[id]; !ok {
			want[id] = true
		}
	}
	if len(want) == 0 {
		return
	}
	forLines(v.data, func(id, place []byte, version, fence int64) {
		if !want[string(id)] {
			return
		}
		if cur, ok := v.rows[string(id)]; ok && version < cur.Version {
			return
		}
		v.rows[string(id)] = seen{Place: string(place), Version: version, Fence: fence}
	})
	for id := range want {
		if _, ok := v.rows[id]; !ok {
			v.rows[id] = seen{} // not shown here: known without a look
		}
	}
}

// row is get without whether it is shown.
func (v *view) row(id string) seen {
	r, _ := v.get(id)
	return r
}

// all returns every row, parsing the file's lines once.
func (v *view) all() map[string]seen {
	if v.whole {
		return v.rows
	}
	rows := make(map[string]seen, bytes.Count(v.data, []byte{'\n'}))
	places := map[string]string{}
	forLines(v.data, func(id, place []byte, version, fence int64) {
		if cur, ok := rows[string(id)]; ok && version < cur.Version {
			return
		}
		p, ok := places[string(place)]
		if !ok {
			p = string(place)
			places[p] = p
		}
		rows[string(id)] = seen{Place: p, Version: version, Fence: fence}
	})
	for id, r := range v.rows { // set or looked up: as new as the file's
		if r.Place != "" {
			rows[id] = r
		}
	}
	v.rows, v.whole, v.data = rows, true, nil
	return rows
}

// set records that this board shows session id as r.
func (v *view) set(id string, r seen) {
	if old, ok := v.get(id); ok && old == r {
		return
	}
	v.rows[id] = r
	v.touched = append(v.touched, id)
}

// The line format. viewHeader begins the file, with the horizon and the
// number of rows written; a line per row follows: id, place, version and
// fencing token, separated by spaces (ids and owners have none). A save
// appends the rows set since the file was read, and the new horizon as a
// line "@through N"; a row's newest line counts, and the greatest
// horizon. A save rewrites the file when the appended lines outnumber
// the rows, or when its last line lacks its newline (a write cut short,
// which the next line must not continue). Every command reads the view
// and most save it, many times a second in a busy fleet: appending a line
// is one write(2), where replacing the file made a file and renamed it
// twice (a tenth of a command's time in a 16-agent drain).
//
// Version 1 had no appended lines and no count; older pickups read a
// version 2 file as no view (they read every row once, then save one of
// their own).
const (
	viewHeader   = "pickup-pg-view 2 "
	viewHeaderV1 = "pickup-pg-view 1 "
	throughLine  = "@through"
)

// parseView reads a view in the line format without parsing its rows
// (get and all do): its horizon (the header's, or the greatest horizon
// line's), its lines and whether its last line is cut short, which is
// left out (an append read while it is written). It checks the header
// only: a damaged row line counts as no row.
func parseView(data []byte) (*view, bool) {
	first, _, complete := bytes.Cut(data, []byte{'\n'})
	if !complete {
		return nil, false
	}
	head, ok := bytes.CutPrefix(first, []byte(viewHeader))
	if !ok {
		if head, ok = bytes.CutPrefix(first, []byte(viewHeaderV1)); !ok {
			return nil, false
		}
	}
	v := &view{rows: map[string]seen{}, data: data[len(first):]}
	through, count, hasCount := bytes.Cut(head, []byte{' '})
	if v.Through, ok = parseInt(through); !ok {
		return nil, false
	}
	if end := bytes.LastIndexByte(v.data, '\n'); end < len(v.data)-1 {
		v.torn, v.data = true, v.data[:end+1]
	}
	v.lines = bytes.Count(v.data, []byte{'\n'}) - 1
	if hasCount {
		if n, ok := parseInt(count); ok {
			v.baseRows = int(n)
		}
	} else {
		v.baseRows = v.lines // version 1: a line per row
	}
	for rest := v.data; ; {
		i := bytes.Index(rest, []byte("\n"+throughLine+" "))
		if i < 0 {
			break
		}
		line, _, _ := bytes.Cut(rest[i+1:], []byte{'\n'})
		if t, ok := parseInt(line[len(throughLine)+1:]); ok {
			v.Through = max(v.Through, t)
		}
		rest = rest[i+1:]
	}
	v.fileThrough = v.Through
	v.lines = max(v.lines, 1) // a file of the line format, if empty
	return v, true
}

// findRow finds session id's lines in a view's lines (from a newline on)
// and returns the newest.
func findRow(data []byte, id string) (seen, bool) {
	var best seen
	found := false
	key := make([]byte, 0, len(id)+2)
	key = append(append(append(key, '\n'), id...), ' ')
	for rest := data; ; {
		i := bytes.Index(rest, key)
		if i < 0 {
			break
		}
		rest = rest[i+1:]
		line, _, _ := bytes.Cut(rest, []byte{'\n'})
		if _, place, version, fence, ok := rowLine(line); ok && (!found || version >= best.Version) {
			best, found = seen{Place: string(place), Version: version, Fence: fence}, true
		}
	}
	return best, found
}

// forLines calls f with each row line of a view's lines.
func forLines(data []byte, f func(id, place []byte, version, fence int64)) {
	for rest := data; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		if id, place, version, fence, ok := rowLine(line); ok {
			f(id, place, version, fence)
		}
	}
}

// rowLine splits a row line: "id place version fence".
func rowLine(line []byte) (id, place []byte, version, fence int64, ok bool) {
	var f [5][]byte
	n := 0
	for len(line) > 0 && n < len(f) {
		field, tail, _ := bytes.Cut(line, []byte{' '})
		f[n], line, n = field, tail, n+1
	}
	if n != 4 || len(f[0]) == 0 || len(f[1]) == 0 || string(f[0]) == throughLine {
		return nil, nil, 0, 0, false
	}
	version, ok1 := parseInt(f[2])
	fence, ok2 := parseInt(f[3])
	return f[0], f[1], version, fence, ok1 && ok2
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
	v := newView(0, nil)
	if data, err := fsx.ReadRegular(s.legacyViewPath()); err == nil {
		v.legacy = true
		var j struct {
			Through int64           `json:"through"`
			Rows    map[string]seen `json:"rows"`
		}
		if json.Unmarshal(data, &j) != nil || j.Rows == nil {
			j.Through, j.Rows = 0, nil
			_ = json.Unmarshal(data, &j.Rows)
		}
		if j.Rows != nil {
			v.Through, v.rows = j.Through, j.Rows
		}
	}
	return v
}

// viewThrough is the view's horizon, read without the lock.
func (s *Board) viewThrough() int64 {
	data, err := fsx.ReadRegular(s.viewPath())
	if err != nil {
		return s.loadView().Through // none yet, or a JSON one
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
	if v.lines > 0 && !v.legacy && !v.torn && v.lines+len(v.touched)+1 <= 2*v.baseRows+64 {
		data := make([]byte, 0, 64*(len(v.touched)+1))
		n := 0
		done := make(map[string]bool, len(v.touched))
		for _, id := range v.touched {
			if done[id] {
				continue
			}
			done[id] = true
			if line, ok := appendRow(nil, id, v.rows[id]); ok {
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
	rows := v.all()
	body := make([]byte, 0, len(rows)*64)
	lines := 0
	for id, r := range rows {
		var ok bool
		if body, ok = appendRow(body, id, r); ok {
			lines++
		}
	}
	data := make([]byte, 0, 64+len(body))
	data = append(data, viewHeader...)
	data = strconv.AppendInt(data, v.Through, 10)
	data = append(data, ' ')
	data = strconv.AppendInt(data, int64(lines), 10)
	data = append(data, '\n')
	data = append(data, body...)
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
	v.lines, v.baseRows, v.fileThrough, v.touched, v.torn = max(lines, 1), lines, v.Through, v.touched[:0], false
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
