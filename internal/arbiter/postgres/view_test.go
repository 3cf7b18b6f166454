package postgres

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pickup-dev/pickup/sessions"
)

// TestViewFormats: the view is saved in the line format and read back
// whole (rows, versions, fencing tokens, horizon); a view that older
// pickups saved as JSON, with or without a horizon, is read too, and
// replaced by the line format at the next save; a damaged view reads as
// none (the next Refresh reads every row).
func TestViewFormats(t *testing.T) {
	s := viewBoard(t)
	want := newView(812, map[string]seen{
		"2026-11-27_15-20-06.e5ong":    {Place: "todo", Version: 7},
		"2026-11-27_15-20-07.e5ong-2":  {Place: "doing/b0a1", Version: 19, Fence: 4},
		"2026-11-27_15-20-08.ctwfi":    {Place: "done", Version: 23, Fence: 5},
		"2026-11-27_15-20-09.ctwfi-10": {Place: "failed", Version: 24},
	})
	if err := s.saveView(want); err != nil {
		t.Fatal(err)
	}
	if got := s.loadView(); got.Through != want.Through || !reflect.DeepEqual(got.all(), want.all()) {
		t.Errorf("loadView = %+v, want %+v", got, want)
	}
	if got := s.viewThrough(); got != 812 {
		t.Errorf("viewThrough = %d, want 812", got)
	}

	legacy := filepath.Join(s.B.RuntimeDir(), "pg-view.json")
	for name, tc := range map[string]struct {
		json    string
		through int64
	}{
		"rows alone":       {`{"2026-11-27_15-20-06.e5ong":{"p":"doing/x","v":9,"f":2}}`, 0},
		"with the horizon": {`{"through":77,"rows":{"2026-11-27_15-20-06.e5ong":{"p":"doing/x","v":9,"f":2}}}`, 77},
	} {
		t.Run(name, func(t *testing.T) {
			os.Remove(s.viewPath())
			if err := os.WriteFile(legacy, []byte(tc.json), 0o644); err != nil {
				t.Fatal(err)
			}
			v := s.loadView()
			if v.Through != tc.through || v.row("2026-11-27_15-20-06.e5ong") != (seen{Place: "doing/x", Version: 9, Fence: 2}) {
				t.Fatalf("loadView of a JSON view = %+v", v)
			}
			if err := s.saveView(v); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(legacy); !os.IsNotExist(err) {
				t.Errorf("the JSON view is still there after a save: %v", err)
			}
			if got := s.loadView(); got.Through != tc.through || len(got.all()) != 1 {
				t.Errorf("loadView after the save = %+v", got)
			}
		})
	}

	// A damaged header: no view (the next Refresh reads every row). A
	// damaged row line: no row (the rows are looked up, not all parsed
	// at every command).
	if err := os.WriteFile(s.viewPath(), []byte("pickup-pg-view 2 x\na todo 1 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := s.loadView(); got.Through != 0 || len(got.all()) != 0 {
		t.Errorf("loadView of a view with a damaged header = %+v, want none", got)
	}
	if err := os.WriteFile(s.viewPath(), []byte(viewHeader+"5 2\nid-without-fields\nb done 4 x\na todo 3 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := s.loadView()
	if _, ok := got.get("id-without-fields"); ok || got.Through != 5 || got.row("a") != (seen{Place: "todo", Version: 3, Fence: 1}) {
		t.Errorf("loadView of a view with damaged rows = %+v", got)
	}
	if _, ok := got.get("b"); ok {
		t.Errorf("a damaged line counted as row b: %+v", got.row("b"))
	}
	if rows := got.all(); len(rows) != 1 {
		t.Errorf("all() of a view with damaged rows = %v, want a alone", rows)
	}
}

// TestViewAppends: a save appends the rows set since the view was read
// and the new horizon, and the view read back is the newest of each row
// and the greatest horizon, also for a reader without the lock
// (viewThrough); a line being appended (no newline yet) is left out; the
// file is rewritten whole once the appended lines outnumber the rows; a
// view of version 1 is read.
func TestViewAppends(t *testing.T) {
	s := viewBoard(t)
	v := newView(10, map[string]seen{"a": {Place: "todo", Version: 1}, "b": {Place: "todo", Version: 2}})
	if err := s.saveView(v); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(s.viewPath())

	v = s.loadView()
	v.set("a", seen{Place: "doing/x", Version: 5, Fence: 3})
	v.set("b", seen{Place: "todo", Version: 2}) // unchanged: no line
	v.Through = 20
	if err := s.saveView(v); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.viewPath())
	if got, want := string(data), string(whole)+"a doing/x 5 3\n@through 20\n"; got != want {
		t.Fatalf("after an append the view is\n%s\nwant\n%s", got, want)
	}
	got := s.loadView()
	if got.Through != 20 || got.row("a") != (seen{Place: "doing/x", Version: 5, Fence: 3}) || got.row("b").Version != 2 {
		t.Errorf("loadView after an append = %+v", got)
	}
	if th := s.viewThrough(); th != 20 {
		t.Errorf("viewThrough after an append = %d, want 20", th)
	}

	// An older line appended after a newer one (two saves in an order
	// the lock does not give, or a hand edit) never wins.
	if err := appendFile(s.viewPath(), []byte("a todo 4 0\n@through 15\n")); err != nil {
		t.Fatal(err)
	}
	if got := s.loadView(); got.row("a").Version != 5 || got.Through != 20 {
		t.Errorf("an older line won: %+v", got)
	}

	// A line being written: left out.
	if err := appendFile(s.viewPath(), []byte("@through 99\nb doing/y 9")); err != nil {
		t.Fatal(err)
	}
	if got := s.loadView(); got.row("b").Version != 2 || got.Through != 99 {
		t.Errorf("a line without its newline counted, or the one before it did not: %+v", got)
	}
	if th := s.viewThrough(); th != 99 {
		t.Errorf("viewThrough = %d, want 99", th)
	}

	// Many saves: the file stays within twice the rows (plus 64 lines).
	for i := range 300 {
		v := s.loadView()
		v.set("a", seen{Place: "todo", Version: int64(100 + i)})
		v.Through = int64(100 + i)
		if err := s.saveView(v); err != nil {
			t.Fatal(err)
		}
	}
	data, _ = os.ReadFile(s.viewPath())
	if n := bytes.Count(data, []byte("\n")); n > 2*2+64+2 {
		t.Errorf("the view has %d lines for 2 rows: never rewritten", n)
	}
	if got := s.loadView(); got.row("a").Version != 399 || got.Through != 399 || got.row("b").Version != 2 {
		t.Errorf("after the rewrites: %+v", got)
	}

	// Version 1 (no appended lines) is read.
	if err := os.WriteFile(s.viewPath(), []byte("pickup-pg-view 1 7\nc done 3 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := s.loadView(); got.Through != 7 || got.row("c") != (seen{Place: "done", Version: 3, Fence: 1}) {
		t.Errorf("a version 1 view read as %+v", got)
	}
}

// TestViewPrefetch: the rows a Refresh looks up in one pass are the
// newest line of each, and a row the file lacks is not shown (not an
// empty place).
func TestViewPrefetch(t *testing.T) {
	s := viewBoard(t)
	data := viewHeader + "9 3\na todo 1 0\nb todo 2 0\nc done 3 1\na doing/x 4 2\n@through 12\nb todo 1 0\n"
	if err := os.WriteFile(s.viewPath(), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	v := s.loadView()
	v.prefetch([]string{"a", "b", "missing"})
	if got := v.row("a"); got != (seen{Place: "doing/x", Version: 4, Fence: 2}) {
		t.Errorf("a = %+v, want its newest line", got)
	}
	if got := v.row("b"); got.Version != 2 {
		t.Errorf("b = %+v, want version 2 (an older line came after)", got)
	}
	if _, ok := v.get("missing"); ok {
		t.Error("a row the view lacks is shown")
	}
	if got := v.row("c"); got.Place != "done" {
		t.Errorf("c (not prefetched) = %+v", got)
	}
	if v.Through != 12 {
		t.Errorf("Through = %d, want 12", v.Through)
	}
	if rows := v.all(); len(rows) != 3 {
		t.Errorf("all() = %v, want a, b and c", rows)
	}
}

// viewBoard is a board with its runtime folder, for the view alone.
func viewBoard(t *testing.T) *Board {
	t.Helper()
	b, err := sessions.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(b.RuntimeDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Board{B: b}
}
