package main

import (
	"bytes"
	"context"
	"html"
	"strconv"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/boardfeed"
	"github.com/pickup-dev/pickup/internal/boardview"
)

// hub keeps the one state of the board, folded from the feed exactly as
// pickup-board folds it (boardview.State), renders it once per change, and
// hands the rendering to every open page. Nothing here runs while the feed
// is quiet: no ticker, no poll; the pages count the ages themselves.
type hub struct {
	feed   *boardfeed.Feed
	render func(*boardview.State, time.Time) ([]byte, error)

	mu      sync.Mutex
	state   *boardview.State
	version uint64
	html    []byte // the last rendering
	cut     *cut   // the last rendering cut into its keyed parts (nil: it could not be)
	frame   []byte // the last rendering as one SSE message
	patch   []byte // the patch from the rendering before it to the last, as one SSE message; nil if none
	subs    map[chan struct{}]struct{}
	renders uint64 // how many renderings were made (for tests)

	dirty chan struct{}
}

// coalesce is the least time between two renderings: a drain of hundreds
// of sessions a second makes four renderings a second, not hundreds. The
// first change after a quiet spell is rendered at once (a session made
// on a quiet board shows within milliseconds); during a burst a page is
// at most a quarter of a second behind. Every rendering is sent to every
// open stream, so on a busy board this bounds the pages' work too
// (measured with 50 pages: the browsers spent 12 times the server's CPU
// at 50 ms).
const coalesce = 250 * time.Millisecond

// coalescePerStream lengthens the time between renderings with each open
// stream, up to coalesceMost: the fewer updates, the less work for the
// server and for the pages, however many; and a change during a burst
// still reaches an open page within a second.
const (
	coalescePerStream = 10 * time.Millisecond
	coalesceMost      = 750 * time.Millisecond
)

func newHub(feed *boardfeed.Feed, snap boardview.Snapshot, render func(*boardview.State, time.Time) ([]byte, error)) *hub {
	return &hub{feed: feed, render: render, state: boardview.New(snap), subs: map[chan struct{}]struct{}{}, dirty: make(chan struct{}, 1)}
}

// run follows the feed and renders until ctx ends.
func (h *hub) run(ctx context.Context) {
	h.rerender()
	go h.feed.Run(ctx, h.apply)
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.dirty:
		}
		h.rerender()
		select {
		case <-ctx.Done():
			return
		case <-time.After(h.interval()):
		}
	}
}

// interval is the least time until the next rendering.
func (h *hub) interval() time.Duration {
	h.mu.Lock()
	n := len(h.subs)
	h.mu.Unlock()
	return min(coalesce+time.Duration(n)*coalescePerStream, coalesceMost)
}

// apply folds a batch of the feed's events into the state, and finds again
// what todo waits on when sessions moved (as pickup-board's model does).
func (h *hub) apply(batch []boardview.Event) {
	moved := false
	for _, e := range batch {
		switch e.(type) {
		case boardview.Arrived, boardview.Removed, boardview.Rescanned:
			moved = true
		}
	}
	h.mu.Lock()
	h.state.Apply(batch...)
	var unfinished = h.state.Unfinished()
	deps := moved && h.state.HasDeps()
	h.mu.Unlock()
	if deps {
		waits := boardview.WaitsFound{At: time.Now(), Waits: h.feed.Waits(unfinished)}
		h.mu.Lock()
		h.state.Apply(waits)
		h.mu.Unlock()
	}
	select {
	case h.dirty <- struct{}{}:
	default:
	}
}

// rerender renders the state and wakes every page, unless the rendering
// is the same as the last.
func (h *hub) rerender() {
	h.mu.Lock()
	out, err := h.render(h.state, time.Now())
	h.renders++
	if err != nil {
		out = []byte("<p class=warn>pickup serve could not render the board: " + html.EscapeString(err.Error()) + "</p>")
	}
	if h.version > 0 && bytes.Equal(out, h.html) {
		h.mu.Unlock()
		return
	}
	c, cerr := cutRendering(out)
	if cerr != nil {
		c = nil // every page gets the whole board then
	}
	h.patch = nil
	if c != nil && h.cut != nil {
		if p := diff(h.cut, c, h.version); p != nil {
			h.patch = sseFrame("patch", h.version+1, p.json())
		}
	}
	h.version++
	h.html, h.cut = out, c
	h.frame = sseFrame("board", h.version, out)
	subs := make([]chan struct{}, 0, len(h.subs))
	for c := range h.subs {
		subs = append(subs, c)
	}
	h.mu.Unlock()
	for _, c := range subs {
		select {
		case c <- struct{}{}:
		default: // it has a wake-up pending: it reads the newest frame then
		}
	}
}

// current returns the newest version's frames: the whole board, and the
// patch from the version before (nil if none).
func (h *hub) current() (frame, patch []byte, version uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.frame, h.patch, h.version
}

// board returns the newest rendering and its version.
func (h *hub) board() ([]byte, uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.html, h.version
}

// with runs fn on the state, under the hub's lock.
func (h *hub) with(fn func(*boardview.State)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn(h.state)
}

func (h *hub) subscribe() chan struct{} {
	c := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[c] = struct{}{}
	h.mu.Unlock()
	return c
}

func (h *hub) unsubscribe(c chan struct{}) {
	h.mu.Lock()
	delete(h.subs, c)
	h.mu.Unlock()
}

// sseFrame is one Server-Sent Event: each line of data on a data: line.
func sseFrame(event string, id uint64, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("event: " + event + "\nid: " + strconv.FormatUint(id, 10) + "\n")
	for _, line := range bytes.Split(data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(bytes.TrimSuffix(line, []byte("\r")))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}
