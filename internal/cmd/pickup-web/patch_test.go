package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/boardview"
	"github.com/pickup-dev/pickup/sessions"
)

// shown is a page's board as a stream's frames make it: the lists and
// their parts, as a page's DOM holds them (the parts of the lists it
// holds, each list by itself).
type shown struct {
	version uint64
	keys    map[string][]string          // list → its keys in order
	html    map[string]map[string]string // list → key → the part's bytes
}

// whole sets the board from a whole rendering.
func (s *shown) whole(html string, v uint64) error {
	c, err := cutRendering([]byte(html))
	if err != nil {
		return err
	}
	s.keys, s.html, s.version = map[string][]string{}, map[string]map[string]string{}, v
	s.lists(c)
	return nil
}

func (s *shown) lists(c *cut) {
	for _, l := range c.lists {
		s.keys[l.id] = nil
		s.html[l.id] = map[string]string{}
		for _, p := range l.parts {
			s.keys[l.id] = append(s.keys[l.id], p.key)
			s.html[l.id][p.key] = p.html
		}
	}
}

// patch applies a patch as the page does.
func (s *shown) patch(data string, v uint64) error {
	var p patch
	if err := json.Unmarshal([]byte(data), &p); err != nil {
		return err
	}
	if p.Base != s.version {
		return fmt.Errorf("a patch from version %d to a board at %d", p.Base, s.version)
	}
	for _, l := range p.Lists {
		old := s.html[l.ID]
		if old == nil {
			return fmt.Errorf("the patch to %d names the list %q, which the board does not have", v, l.ID)
		}
		next := map[string]string{}
		var keys []string
		for _, r := range l.Keys {
			if pair, ok := r.([]any); ok && len(pair) == 2 {
				at, n := int(pair[0].(float64)), int(pair[1].(float64))
				if at < 0 || n < 1 || at+n > len(s.keys[l.ID]) {
					return fmt.Errorf("the patch to %d keeps %v of %q, which has %d", v, pair, l.ID, len(s.keys[l.ID]))
				}
				keys = append(keys, s.keys[l.ID][at:at+n]...)
			} else if k, ok := r.(string); ok {
				if _, ok := l.HTML[k]; !ok {
					return fmt.Errorf("the patch to %d names %q in %q without its bytes", v, k, l.ID)
				}
				keys = append(keys, k)
			} else {
				return fmt.Errorf("the patch to %d has %v in the keys of %q", v, r, l.ID)
			}
		}
		for _, k := range keys {
			h, ok := l.HTML[k]
			if !ok {
				if h, ok = old[k]; !ok {
					return fmt.Errorf("the patch to %d keeps %q in %q, which the board does not have", v, k, l.ID)
				}
			} else if strings.Contains(h, "data-list") {
				// A part sent whole brings the lists it holds.
				c, err := cutRendering([]byte(`<div id="x" data-list>` + h + `</div>`))
				if err != nil {
					return err
				}
				s.lists(&cut{lists: c.lists[1:]})
			}
			next[k] = h
		}
		s.keys[l.ID], s.html[l.ID] = keys, next
	}
	s.version = v
	return nil
}

// same says how s differs from the whole rendering html ("" if in no way):
// the same lists, keys in the same order, the same bytes for every part
// that holds no list.
func (s *shown) same(html string) string {
	var want shown
	if err := want.whole(html, 0); err != nil {
		return err.Error()
	}
	if len(want.keys) != len(s.keys) {
		return fmt.Sprintf("%d lists, want %d", len(s.keys), len(want.keys))
	}
	for id, keys := range want.keys {
		if strings.Join(s.keys[id], "\n") != strings.Join(keys, "\n") {
			return fmt.Sprintf("list %s: keys %q, want %q", id, s.keys[id], keys)
		}
		for _, k := range keys {
			if h := want.html[id][k]; !strings.Contains(h, "data-list") && s.html[id][k] != h {
				return fmt.Sprintf("list %s, %s: %q, want %q", id, k, s.html[id][k], h)
			}
		}
	}
	return ""
}

// TestPatches: renderings of a board that changes, each patched from the
// one before, end as the last rendering; a patch carries only the rows
// that changed.
func TestPatches(t *testing.T) {
	_, b := newBoard(t)
	var made []sessions.Session
	for i := range 40 {
		s, err := b.Create(sessions.Meta{Title: fmt.Sprintf("session %d <b>", i), Tags: []string{"t"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, s)
	}
	tmpl := templates()
	render := renderer(tmpl, true)
	snap := boardview.Snapshot{Dir: b.Dir}
	for _, s := range made[:30] {
		snap.Items = append(snap.Items, boardview.Item{Session: s, Since: time.Unix(1_700_000_000, 0)})
	}
	st := boardview.New(snap)
	now := time.Unix(1_700_000_100, 0)
	first, err := render(st, now)
	if err != nil {
		t.Fatal(err)
	}
	var page shown
	if err := page.whole(string(first), 1); err != nil {
		t.Fatal(err)
	}
	prev, _ := cutRendering(first)
	v := uint64(1)
	for i, s := range made[:10] {
		st.Apply(boardview.Removed{ID: s.ID, State: sessions.Todo, At: now})
		if i%3 == 0 {
			st.Apply(boardview.Arrived{Item: boardview.Item{Session: made[30+i], Since: now}, At: now})
		}
		out, err := render(st, now)
		if err != nil {
			t.Fatal(err)
		}
		next, err := cutRendering(out)
		if err != nil {
			t.Fatal(err)
		}
		p := diff(prev, next, v)
		if p == nil {
			t.Fatalf("change %d: no patch", i)
		}
		rows := 0
		for _, l := range p.Lists {
			if l.ID == "waiting-items" {
				rows = len(l.HTML)
				// A row gone, one made: at most three runs kept around the
				// one made, not 30 keys.
				if len(l.Keys) > 4 {
					t.Errorf("change %d: the waiting list's keys are %d runs: %v", i, len(l.Keys), l.Keys)
				}
			}
		}
		if want := map[bool]int{true: 1, false: 0}[i%3 == 0]; rows != want {
			t.Errorf("change %d: the patch carries %d waiting rows, want %d (the one made)", i, rows, want)
		}
		if err := page.patch(string(p.json()), v+1); err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
		v++
		prev = next
		if d := page.same(string(out)); d != "" {
			t.Fatalf("change %d: the patched board differs from the rendering: %s", i, d)
		}
	}
}
