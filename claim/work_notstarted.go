package claim

import (
	"context"
	"errors"
	"sync"
)

// ErrNotStarted marks a Pool's Run error that says the work could not even
// start: a command that is not there or not executable. That is the
// caller's mistake, not the session's, and it would be the same for every
// session: counting it as a failed attempt would set the whole backlog
// aside in failed/ in a moment. So the pool returns the session to todo/
// uncounted, stops claiming at once, lets the runs already going finish,
// and Serve returns the error.
var ErrNotStarted = errors.New("could not start")

// halting lets the first worker whose Run could not start stop every
// worker's claiming, and keeps its error for Serve.
type halting struct {
	ctx    context.Context // cancelled by halt; derived from the pool's stop
	cancel context.CancelFunc

	mu  sync.Mutex
	err error
}

func newHalting(stop context.Context) *halting {
	ctx, cancel := context.WithCancel(stop)
	return &halting{ctx: ctx, cancel: cancel}
}

// halt stops claiming, keeping the first error.
func (h *halting) halt(err error) {
	h.mu.Lock()
	if h.err == nil {
		h.err = err
	}
	h.mu.Unlock()
	h.cancel()
}

// reason is the error that halted the pool, or nil.
func (h *halting) reason() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}
