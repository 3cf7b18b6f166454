package sessions_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/sessions"
)

// TestDepsWait: what a session waits on, and whether forever, for the
// shapes a board's depends_on take.
func TestDepsWait(t *testing.T) {
	type want struct {
		on, missing, cycle string // comma-joined; cycle " -> "-joined
	}
	tests := []struct {
		name  string
		files map[string]string // board path → depends_on
		ask   map[string]want   // id → what it waits on
	}{
		{
			name:  "waits on work in progress",
			files: map[string]string{"todo/deploy.md": "[build]", "doing/bob/build.md": ""},
			ask:   map[string]want{"deploy": {on: "build"}},
		},
		{
			name:  "done is no wait",
			files: map[string]string{"todo/deploy.md": "[build, test]", "done/build.md": "", "todo/test.md": ""},
			ask:   map[string]want{"deploy": {on: "test"}, "test": {}},
		},
		{
			name:  "missing",
			files: map[string]string{"todo/deploy.md": "[build, ghost, phantom]", "todo/build.md": ""},
			ask:   map[string]want{"deploy": {on: "build, ghost, phantom", missing: "ghost, phantom"}},
		},
		{
			name:  "failed is not missing",
			files: map[string]string{"todo/deploy.md": "[build]", "failed/build.md": ""},
			ask:   map[string]want{"deploy": {on: "build"}},
		},
		{
			name:  "self",
			files: map[string]string{"todo/self.md": "[self]"},
			ask:   map[string]want{"self": {on: "self", cycle: "self -> self"}},
		},
		{
			name:  "two, from the smallest id",
			files: map[string]string{"todo/b.md": "[a]", "todo/a.md": "[b]"},
			ask:   map[string]want{"a": {on: "b", cycle: "a -> b -> a"}, "b": {on: "a", cycle: "a -> b -> a"}},
		},
		{
			name: "three, through doing and failed",
			files: map[string]string{"todo/a.md": "[b]", "doing/ana/b.md": "[c]", "failed/c.md": "[a]",
				"todo/d.md": "[a]"}, // waits on the cycle without being in it
			ask: map[string]want{"a": {on: "b", cycle: "a -> b -> c -> a"}, "d": {on: "a"}},
		},
		{
			name:  "a done session breaks the cycle",
			files: map[string]string{"todo/a.md": "[b]", "done/b.md": "[a]"},
			ask:   map[string]want{"a": {}},
		},
		{
			name:  "shortest way round",
			files: map[string]string{"todo/a.md": "[x, b]", "todo/x.md": "[y]", "todo/y.md": "[a]", "todo/b.md": "[a]"},
			ask:   map[string]want{"a": {on: "x, b", cycle: "a -> b -> a"}, "y": {on: "a", cycle: "a -> b -> a"}},
		},
		{
			name:  "a diamond is no cycle",
			files: map[string]string{"todo/a.md": "[b, c]", "todo/b.md": "[d]", "todo/c.md": "[d]", "todo/d.md": ""},
			ask:   map[string]want{"a": {on: "b, c"}, "b": {on: "d"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := testBoard(t)
			for path, deps := range tt.files {
				content := "---\n"
				if deps != "" {
					content += "depends_on: " + deps + "\n"
				}
				put(t, b, path, content+"---\n")
			}
			unfinished, err := b.List(sessions.Todo, sessions.Doing, sessions.Failed)
			if err != nil {
				t.Fatal(err)
			}
			d := b.Deps(unfinished)
			for _, s := range unfinished {
				w, ok := tt.ask[s.ID]
				if !ok {
					continue
				}
				got := d.Wait(s)
				if g := (want{strings.Join(got.On, ", "), strings.Join(got.Missing, ", "), strings.Join(got.Cycle, " -> ")}); g != w {
					t.Errorf("%s waits %+v, want %+v", s.ID, g, w)
				}
				if got.Forever() != (w.missing != "" || w.cycle != "") {
					t.Errorf("%s: Forever() = %v", s.ID, got.Forever())
				}
			}
		})
	}
}

// TestDepsLongChain: a chain of 20,000 dependencies that closes on itself
// is one cycle, found once for all its members, and its text stays short.
func TestDepsLongChain(t *testing.T) {
	const n = 20000
	var list []sessions.Session
	for i := range n {
		list = append(list, sessions.Session{ID: fmt.Sprintf("s%06d", i), State: sessions.Todo,
			Meta: sessions.Meta{DependsOn: []string{fmt.Sprintf("s%06d", (i+1)%n)}}})
	}
	d := testBoard(t).Deps(list)
	w := d.Wait(list[n/2])
	if len(w.Cycle) != n+1 || w.Cycle[0] != "s000000" || w.Cycle[1] != "s000001" || w.Cycle[n] != "s000000" {
		t.Fatalf("cycle of %d ids from %v", len(w.Cycle), w.Cycle[:3])
	}
	if text := sessions.CycleText(w.Cycle); text != "s000000 -> s000001 -> s000002 -> s000003 -> s000004 -> s000005 -> s000006 -> ... (20000 sessions) -> s000000" {
		t.Errorf("CycleText = %q", text)
	}
	for _, s := range list {
		if got := d.Wait(s).Cycle; len(got) != len(w.Cycle) || &got[0] != &w.Cycle[0] {
			t.Fatalf("%s sees another cycle", s.ID) // or the same, found again
		}
	}
}

func TestWaitsWhy(t *testing.T) {
	tests := []struct {
		w    sessions.Waits
		want string
	}{
		{sessions.Waits{On: []string{"a"}}, ""},
		{sessions.Waits{On: []string{"a", "g"}, Missing: []string{"g"}}, "g does not exist"},
		{sessions.Waits{On: []string{"g", "h"}, Missing: []string{"g", "h"}}, "g, h do not exist"},
		{sessions.Waits{On: []string{"b", "g"}, Missing: []string{"g"}, Cycle: []string{"a", "b", "a"}}, "g does not exist; dependency cycle a -> b -> a"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.w.Why(); got != tt.want {
				t.Errorf("Why() = %q, want %q", got, tt.want)
			}
		})
	}
}
