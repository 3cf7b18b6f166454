package sessions

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// Waits is what a session waits on, as the board stands.
type Waits struct {
	// On: its dependencies not in done/, in depends_on order.
	On []string
	// Missing: those of On that no state of the board holds, so they are
	// never done.
	Missing []string
	// Cycle: a cycle of depends_on among sessions not done that the
	// session is caught in, its first id repeated last (a, b, a): none of
	// them is ever ready. When several cycles intertwine, it is the
	// shortest through the smallest id of them, the same for each.
	Cycle []string
}

// Forever reports whether next can never take the session as the board
// stands: it waits on a session that does not exist, or on itself through
// a cycle.
func (w Waits) Forever() bool { return len(w.Missing) > 0 || len(w.Cycle) > 0 }

// Why says why a session waits forever ("ghost does not exist; dependency
// cycle a -> b -> a"), or "" if it does not.
func (w Waits) Why() string {
	var why []string
	switch len(w.Missing) {
	case 0:
	case 1:
		why = append(why, w.Missing[0]+" does not exist")
	default:
		why = append(why, strings.Join(w.Missing, ", ")+" do not exist")
	}
	if len(w.Cycle) > 0 {
		why = append(why, "dependency cycle "+CycleText(w.Cycle))
	}
	return strings.Join(why, "; ")
}

// maxCycleText is how many ids of a cycle CycleText names.
const maxCycleText = 8

// CycleText writes a cycle as "a -> b -> a"; one of more than a few
// sessions is cut in the middle, so that a message stays readable.
func CycleText(cycle []string) string {
	if len(cycle) <= maxCycleText+1 {
		return strings.Join(cycle, " -> ")
	}
	head := strings.Join(cycle[:maxCycleText-1], " -> ")
	return fmt.Sprintf("%s -> ... (%d sessions) -> %s", head, len(cycle)-1, cycle[len(cycle)-1])
}

// Deps tells what sessions wait on. It knows the board's unfinished
// sessions (todo/, doing/ and failed/: the ones that can still be in a
// cycle) and looks up done/ one id at a time, as next does, so that a board
// with thousands of finished sessions costs nothing more. It is meant for
// one question at a time (a listing, a doctor run), not to be kept: the
// board moves on.
type Deps struct {
	b     *Board
	node  map[string]int32 // id → node, for each unfinished session
	ids   []string         // node → id
	deps  [][]string       // node → its depends_on
	done  map[string]bool  // id → in done/, looked up once
	exist map[string]bool  // id → somewhere on the board, looked up once

	// Strongly connected components, found by Tarjan's algorithm from the
	// nodes asked about only (see visit).
	num, low []int32 // DFS number (0: not visited yet) and low link
	onStack  []bool
	stack    []int32
	comp     []int32            // node → component
	comps    [][]int32          // component → its nodes
	cycles   map[int32][]string // component → its cycle, once found
	counter  int32
}

// Deps returns what answers for unfinished, which must hold every session
// of todo/, doing/ and failed/: a dependency found in none of them nor in
// done/ is missing.
func (b *Board) Deps(unfinished []Session) *Deps {
	d := &Deps{b: b, node: make(map[string]int32, len(unfinished)), done: map[string]bool{}, exist: map[string]bool{}}
	for _, s := range unfinished {
		if _, dup := d.node[s.ID]; dup {
			continue // a copy in two places: doctor's business
		}
		d.node[s.ID] = int32(len(d.deps))
		d.ids = append(d.ids, s.ID)
		d.deps = append(d.deps, s.DependsOn)
	}
	n := len(d.deps)
	d.num, d.low, d.onStack, d.comp = make([]int32, n), make([]int32, n), make([]bool, n), make([]int32, n)
	return d
}

// isDone reports whether id is in done/ (a regular file, as next checks).
func (d *Deps) isDone(id string) bool {
	done, ok := d.done[id]
	if !ok {
		info, err := os.Lstat(d.b.Path(Done, "", id))
		done = err == nil && info.Mode().IsRegular()
		d.done[id] = done
	}
	return done
}

// exists reports whether some state holds id. Unfinished sessions are
// known; anything else is looked for on disk, which also finds a session
// the listing skipped (unreadable, say), so it is never called missing.
func (d *Deps) exists(id string) bool {
	if _, ok := d.node[id]; ok {
		return true
	}
	e, ok := d.exist[id]
	if !ok {
		places, err := d.b.Locate(id)
		e = err != nil || len(places) > 0 // an id that cannot be looked up is not called missing
		d.exist[id] = e
	}
	return e
}

// Wait says what s waits on.
func (d *Deps) Wait(s Session) Waits {
	var w Waits
	for _, dep := range s.DependsOn {
		if d.isDone(dep) {
			continue
		}
		w.On = append(w.On, dep)
		if !d.exists(dep) {
			w.Missing = append(w.Missing, dep)
		}
	}
	if v, ok := d.node[s.ID]; ok && len(w.On) > 0 {
		w.Cycle = d.cycle(v)
	}
	return w
}

// edges returns the nodes v waits on: its unfinished dependencies.
func (d *Deps) edges(v int32) []int32 {
	var out []int32
	for _, dep := range d.deps[v] {
		if u, ok := d.node[dep]; ok && !d.isDone(dep) {
			out = append(out, u)
		}
	}
	return out
}

// cycle returns a cycle through v's component, from the component's
// smallest id, or nil if v is in none.
func (d *Deps) cycle(v int32) []string {
	if d.num[v] == 0 {
		d.visit(v)
	}
	c := d.comp[v]
	members := d.comps[c]
	if len(members) == 1 && !slices.Contains(d.edges(v), v) {
		return nil
	}
	// Every member of a component shares its cycle: find it once (a list
	// of a board where 10,000 sessions form one cycle asks 10,000 times).
	if cycle, ok := d.cycles[c]; ok {
		return cycle
	}
	if d.cycles == nil {
		d.cycles = map[int32][]string{}
	}
	d.cycles[c] = d.findCycle(members)
	return d.cycles[c]
}

// findCycle returns a cycle through the members of a component, from its
// smallest id.
func (d *Deps) findCycle(members []int32) []string {
	ids := make(map[int32]string, len(members))
	start := members[0]
	for _, m := range members {
		ids[m] = d.ids[m]
		if ids[m] < ids[start] {
			start = m
		}
	}
	// The shortest way back to start, within the component: breadth first.
	from := map[int32]int32{}
	queue := []int32{start}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, x := range d.edges(u) {
			if _, in := ids[x]; !in {
				continue
			}
			if x == start {
				path := []string{ids[start]}
				for at := u; at != start; at = from[at] {
					path = append(path, ids[at])
				}
				path = append(path, ids[start])
				slices.Reverse(path[1 : len(path)-1])
				return path
			}
			if _, seen := from[x]; !seen {
				from[x] = u
				queue = append(queue, x)
			}
		}
	}
	return nil // not reached: a component of more than one node has a cycle through every node
}

// visit runs Tarjan's algorithm from v, iteratively (a chain of 100,000
// dependencies must not overflow the stack), giving every node it reaches
// its component.
func (d *Deps) visit(root int32) {
	type frame struct {
		v     int32
		edges []int32
		next  int
	}
	enter := func(v int32) frame {
		d.counter++
		d.num[v], d.low[v] = d.counter, d.counter
		d.stack = append(d.stack, v)
		d.onStack[v] = true
		return frame{v: v, edges: d.edges(v)}
	}
	frames := []frame{enter(root)}
	for len(frames) > 0 {
		f := &frames[len(frames)-1]
		if f.next < len(f.edges) {
			u := f.edges[f.next]
			f.next++
			switch {
			case d.num[u] == 0:
				frames = append(frames, enter(u))
			case d.onStack[u]:
				d.low[f.v] = min(d.low[f.v], d.num[u])
			}
			continue
		}
		v := f.v
		frames = frames[:len(frames)-1]
		if len(frames) > 0 {
			p := frames[len(frames)-1].v
			d.low[p] = min(d.low[p], d.low[v])
		}
		if d.low[v] != d.num[v] {
			continue
		}
		c := int32(len(d.comps))
		var members []int32
		for {
			x := d.stack[len(d.stack)-1]
			d.stack = d.stack[:len(d.stack)-1]
			d.onStack[x] = false
			d.comp[x] = c
			members = append(members, x)
			if x == v {
				break
			}
		}
		d.comps = append(d.comps, members)
	}
}
