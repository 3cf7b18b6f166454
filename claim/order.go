package claim

import (
	"container/heap"

	"github.com/pickup-dev/pickup/sessions"
)

// ordered hands out sessions in board order (sessions.Compare) without
// sorting them all: next usually needs only the first one or two of a
// listing, and a heap of indices costs O(n) to build against O(n log n)
// moves of whole Session values for a sort.
type ordered struct {
	list []sessions.Session
	idx  []int32
}

func newOrdered(list []sessions.Session) *ordered {
	o := &ordered{list: list, idx: make([]int32, len(list))}
	for i := range o.idx {
		o.idx[i] = int32(i)
	}
	heap.Init(o)
	return o
}

func (o *ordered) Len() int { return len(o.idx) }
func (o *ordered) Less(i, j int) bool {
	return sessions.Compare(o.list[o.idx[i]], o.list[o.idx[j]]) < 0
}
func (o *ordered) Swap(i, j int) { o.idx[i], o.idx[j] = o.idx[j], o.idx[i] }
func (o *ordered) Push(x any)    { o.idx = append(o.idx, x.(int32)) }
func (o *ordered) Pop() any {
	last := o.idx[len(o.idx)-1]
	o.idx = o.idx[:len(o.idx)-1]
	return last
}

// empty reports whether nothing is left (a nil ordered is empty).
func (o *ordered) empty() bool { return o == nil || len(o.idx) == 0 }

// next removes and returns the first session in board order.
func (o *ordered) next() sessions.Session {
	return o.list[heap.Pop(o).(int32)]
}

// add puts a session (back) in the order.
func (o *ordered) add(s sessions.Session) {
	o.list = append(o.list, s)
	heap.Push(o, int32(len(o.list)-1))
}
