package pgboard

import (
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
	b, err := sessions.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(b.RuntimeDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Board{B: b}
	want := &view{Through: 812, Rows: map[string]seen{
		"2026-11-27_15-20-06.e5ong":    {Place: "todo", Version: 7},
		"2026-11-27_15-20-07.e5ong-2":  {Place: "doing/b0a1", Version: 19, Fence: 4},
		"2026-11-27_15-20-08.ctwfi":    {Place: "done", Version: 23, Fence: 5},
		"2026-11-27_15-20-09.ctwfi-10": {Place: "failed", Version: 24},
	}}
	if err := s.saveView(want); err != nil {
		t.Fatal(err)
	}
	if got := s.loadView(); !reflect.DeepEqual(got, want) {
		t.Errorf("loadView = %+v, want %+v", got, want)
	}
	if got := s.viewThrough(); got != 812 {
		t.Errorf("viewThrough = %d, want 812", got)
	}

	legacy := filepath.Join(b.RuntimeDir(), "pg-view.json")
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
			if v.Through != tc.through || v.Rows["2026-11-27_15-20-06.e5ong"] != (seen{Place: "doing/x", Version: 9, Fence: 2}) {
				t.Fatalf("loadView of a JSON view = %+v", v)
			}
			if err := s.saveView(v); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(legacy); !os.IsNotExist(err) {
				t.Errorf("the JSON view is still there after a save: %v", err)
			}
			if got := s.loadView(); got.Through != tc.through || len(got.Rows) != 1 {
				t.Errorf("loadView after the save = %+v", got)
			}
		})
	}

	if err := os.WriteFile(s.viewPath(), []byte(viewHeader+"5\nid-without-fields\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := s.loadView(); got.Through != 0 || len(got.Rows) != 0 {
		t.Errorf("loadView of a damaged view = %+v, want none", got)
	}
}
