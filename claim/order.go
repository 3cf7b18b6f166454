package claim

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/pickup-dev/pickup/sessions"
)

// ordered hands out sessions in board order (sessions.Compare), from two
// sources merged: a lineup (sessions.Lineup: already in order, each session
// decoded when its turn comes) and sessions given as values (a full
// listing, or a candidate put back after an edit).
//
// The values start as a heap: building one costs O(n) against O(n log n)
// for a sort, and a one-shot next needs only the first one or two of a
// listing. Once more than a few have been taken (a Queue draining a
// snapshot takes them all), it sorts what is left, and each next one then
// costs nothing. It orders compact keys rather than the sessions
// themselves: comparing two keys reads 40 bytes next to each other instead
// of two Session values scattered over a listing of thousands.
//
// Each session has a ref, stable while the ordered lives: a lineup's
// session i has ref i, values come after them (ref lineup.Len()+index in
// list).
type ordered struct {
	lineup  *sessions.Lineup
	lrefs   []int32          // refs of the lineup's sessions, in order
	lpos    int              // lrefs[lpos:] are left
	head    sessions.Session // the lineup's next session, if decoded
	decoded bool             // head holds lrefs[lpos]

	base   int32 // refs of values start here
	list   []sessions.Session
	keys   []orderKey // a heap, or sorted from pos on
	sorted bool
	pos    int // sorted: keys[pos:] are left
	taken  int

	// The sessions of the listing that the queue's filter excluded, kept
	// so that renewing a snapshot does not take them for new arrivals:
	// refs of the lineup, and ids of sessions given as values.
	lexcl []int32
	vexcl []string
}

// orderKey is what sessions.Compare looks at, and where the session is.
type orderKey struct {
	prio sessions.Priority
	nsec int32
	sec  int64
	id   string
	i    int32 // ref of the session
}

func keyOf(s sessions.Session, ref int32) orderKey {
	return orderKey{prio: s.Priority, sec: s.CreatedAt.Unix(), nsec: int32(s.CreatedAt.Nanosecond()), id: s.ID, i: ref}
}

// compareKeys orders keys exactly as sessions.Compare orders their
// sessions: priority, then created_at, then id.
func compareKeys(a, b orderKey) int {
	if c := cmp.Compare(a.prio, b.prio); c != 0 {
		return c
	}
	if c := cmp.Compare(a.sec, b.sec); c != 0 {
		return c
	}
	if c := cmp.Compare(a.nsec, b.nsec); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// sortAfter is how many sessions are taken from the heap before the rest
// is sorted.
const sortAfter = 16

func newOrdered(list []sessions.Session) *ordered {
	o := &ordered{list: list, keys: make([]orderKey, len(list))}
	for i, s := range list {
		o.keys[i] = keyOf(s, int32(i))
	}
	heap.Init((*keyHeap)(o))
	return o
}

// newLineupOrdered hands out the sessions of lineup whose refs (indexes in
// the lineup) are given, in the lineup's order.
func newLineupOrdered(lineup *sessions.Lineup, refs []int32) *ordered {
	return &ordered{lineup: lineup, lrefs: refs, base: int32(lineup.Len())}
}

// empty reports whether nothing is left (a nil ordered is empty).
func (o *ordered) empty() bool {
	return o == nil || (o.lpos == len(o.lrefs) && o.valuesEmpty())
}

func (o *ordered) valuesEmpty() bool { return o.pos == len(o.keys) }

// next removes and returns the first session in board order. It reports
// false if the lineup turned out damaged: the caller lists instead.
func (o *ordered) next() (sessions.Session, bool) {
	if o.lpos < len(o.lrefs) {
		if !o.decoded {
			s, ok := o.lineup.Session(int(o.lrefs[o.lpos]))
			if !ok {
				return sessions.Session{}, false
			}
			o.head, o.decoded = s, true
		}
		if o.valuesEmpty() || compareKeys(keyOf(o.head, 0), o.firstValue()) <= 0 {
			s := o.head
			o.head, o.decoded = sessions.Session{}, false
			o.lpos++
			return s, true
		}
	}
	return o.nextValue(), true
}

// firstValue is the key of the first session given as a value.
func (o *ordered) firstValue() orderKey {
	if o.sorted {
		return o.keys[o.pos]
	}
	return o.keys[0] // the heap's root
}

func (o *ordered) nextValue() sessions.Session {
	if !o.sorted {
		if o.taken++; o.taken <= sortAfter {
			return o.list[heap.Pop((*keyHeap)(o)).(orderKey).i-o.base]
		}
		slices.SortFunc(o.keys, compareKeys)
		o.sorted = true
	}
	k := o.keys[o.pos]
	o.keys[o.pos] = orderKey{} // let the id go
	o.pos++
	return o.list[k.i-o.base]
}

// add puts a session (back) in the order.
func (o *ordered) add(s sessions.Session) {
	o.list = append(o.list, s)
	k := keyOf(s, o.base+int32(len(o.list)-1))
	if !o.sorted {
		heap.Push((*keyHeap)(o), k)
		return
	}
	rest := o.keys[o.pos:]
	at, _ := slices.BinarySearchFunc(rest, k, compareKeys)
	o.keys = slices.Insert(o.keys, o.pos+at, k)
}

// keyHeap is ordered's heap.Interface, for its heap phase.
type keyHeap ordered

func (h *keyHeap) Len() int           { return len(h.keys) }
func (h *keyHeap) Less(i, j int) bool { return compareKeys(h.keys[i], h.keys[j]) < 0 }
func (h *keyHeap) Swap(i, j int)      { h.keys[i], h.keys[j] = h.keys[j], h.keys[i] }
func (h *keyHeap) Push(x any)         { h.keys = append(h.keys, x.(orderKey)) }
func (h *keyHeap) Pop() any {
	last := h.keys[len(h.keys)-1]
	h.keys = h.keys[:len(h.keys)-1]
	return last
}

// refs is one more than the largest ref.
func (o *ordered) refs() int { return int(o.base) + len(o.list) }

// left calls f with the ref and the id of every session left.
func (o *ordered) left(f func(ref int32, id string)) {
	for _, ref := range o.lrefs[o.lpos:] {
		f(ref, o.lineup.ID(int(ref)))
	}
	rest := o.keys
	if o.sorted {
		rest = o.keys[o.pos:]
	}
	for _, k := range rest {
		f(k.i, k.id)
	}
}

// dependsOn returns the depends_on of the session with ref.
func (o *ordered) dependsOn(ref int32) []string {
	if ref < o.base {
		return o.lineup.DependsOn(int(ref))
	}
	return o.list[ref-o.base].DependsOn
}

// keep drops the sessions left for which keep returns false.
func (o *ordered) keep(keep func(ref int32) bool) {
	if o.lpos < len(o.lrefs) {
		kept := o.lrefs[:o.lpos]
		for _, ref := range o.lrefs[o.lpos:] {
			if keep(ref) {
				kept = append(kept, ref)
			}
		}
		o.lrefs = kept
		o.head, o.decoded = sessions.Session{}, false
	}
	start := 0
	if o.sorted {
		start = o.pos
	}
	kept := o.keys[:start]
	for _, k := range o.keys[start:] {
		if keep(k.i) {
			kept = append(kept, k)
		}
	}
	clear(o.keys[len(kept):])
	o.keys = kept
	if !o.sorted {
		heap.Init((*keyHeap)(o))
	}
}

// excludedIDs calls f with the id of every session the filter excluded
// from the listing (none for a nil ordered).
func (o *ordered) excludedIDs(f func(id string)) {
	if o == nil {
		return
	}
	for _, ref := range o.lexcl {
		f(o.lineup.ID(int(ref)))
	}
	for _, id := range o.vexcl {
		f(id)
	}
}
