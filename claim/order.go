package claim

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/pickup-dev/pickup/sessions"
)

// ordered hands out sessions in board order (sessions.Compare). It starts
// as a heap: building one costs O(n) against O(n log n) for a sort, and a
// one-shot next needs only the first one or two of a listing. Once more
// than a few have been taken (a Queue draining a snapshot takes them all),
// it sorts what is left, and each next one then costs nothing.
//
// It orders compact keys rather than the sessions themselves: comparing
// two keys reads 40 bytes next to each other instead of two Session values
// scattered over a listing of thousands.
type ordered struct {
	list   []sessions.Session
	keys   []orderKey // a heap, or sorted from pos on
	sorted bool
	pos    int // sorted: keys[pos:] are left
	taken  int
}

// orderKey is what sessions.Compare looks at, and where the session is.
type orderKey struct {
	prio sessions.Priority
	nsec int32
	sec  int64
	id   string
	i    int32 // index in list
}

func keyOf(s sessions.Session, i int) orderKey {
	return orderKey{prio: s.Priority, sec: s.CreatedAt.Unix(), nsec: int32(s.CreatedAt.Nanosecond()), id: s.ID, i: int32(i)}
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
		o.keys[i] = keyOf(s, i)
	}
	heap.Init((*keyHeap)(o))
	return o
}

// empty reports whether nothing is left (a nil ordered is empty).
func (o *ordered) empty() bool { return o == nil || o.pos == len(o.keys) }

// next removes and returns the first session in board order.
func (o *ordered) next() sessions.Session {
	if !o.sorted {
		if o.taken++; o.taken <= sortAfter {
			return o.list[heap.Pop((*keyHeap)(o)).(orderKey).i]
		}
		slices.SortFunc(o.keys, compareKeys)
		o.sorted = true
	}
	k := o.keys[o.pos]
	o.keys[o.pos] = orderKey{} // let the id go
	o.pos++
	return o.list[k.i]
}

// add puts a session (back) in the order.
func (o *ordered) add(s sessions.Session) {
	o.list = append(o.list, s)
	k := keyOf(s, len(o.list)-1)
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

// left calls f with the index in list and the id of every session left.
func (o *ordered) left(f func(i int32, id string)) {
	rest := o.keys
	if o.sorted {
		rest = o.keys[o.pos:]
	}
	for _, k := range rest {
		f(k.i, k.id)
	}
}

// keep drops the sessions left for which keep returns false.
func (o *ordered) keep(keep func(i int32) bool) {
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
