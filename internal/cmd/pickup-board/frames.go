package main

import (
	"reflect"
	"sync"
	"time"
	"unsafe"

	tea "charm.land/bubbletea/v2"
)

// frames stops bubbletea's frame ticker while the board is idle.
//
// bubbletea (v2.1.1) flushes its renderer on a ticker at the frame rate
// for as long as the program runs, whether or not anything changed, and
// has no option to stop it: measured here, 20 frames a second cost an
// idle board 4 clock ticks in 10 s, 60 frames 11. A board where nothing
// happens must do no work, so the model wakes the ticker on every message
// that can change the screen and again on every view it renders, and
// frames stops it once idleFor has passed since the later of the two.
//
// bubbletea renders the view after Update returns and after it has handed
// Update's command on, which can wait: counted from the wake alone, a
// machine that runs the event loop late could stop the ticker before the
// view it was woken for is rendered, and the screen would stay as it was
// until the next message. Woken by the view as well, the ticker runs on
// past the view's store, which follows View in the same goroutine.
//
// The ticker is an unexported field of tea.Program, found by reflection.
// Should a later bubbletea rename it, findTicker returns nil and the board
// works as bubbletea does, ticking; TestFindTicker fails to say so.
type frames struct {
	mu     sync.Mutex
	ticker *time.Ticker
	every  time.Duration
	idle   *time.Timer
}

// findTicker returns p's frame ticker, or nil. Call it once p runs (from
// Init: bubbletea starts its renderer before).
func findTicker(p *tea.Program) *time.Ticker {
	v := reflect.ValueOf(p).Elem().FieldByName("ticker")
	if !v.IsValid() || v.Type() != reflect.TypeFor[*time.Ticker]() {
		return nil
	}
	t, _ := reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem().Interface().(*time.Ticker)
	return t
}

// idleAfter is how many frames without a message or a view stop the
// ticker; it runs for at least minIdle, room for a machine that runs the
// event loop late.
const (
	idleAfter = 3
	minIdle   = 500 * time.Millisecond
)

func (f *frames) idleFor() time.Duration { return max(idleAfter*f.every, minIdle) }

// start takes over p's ticker, at fps frames a second.
func (f *frames) start(p *tea.Program, fps int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ticker, f.every = findTicker(p), time.Second/time.Duration(fps)
}

// wake makes the ticker run for idleFor more: call it on every message
// that may change the screen and from View.
func (f *frames) wake() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ticker == nil {
		return
	}
	f.ticker.Reset(f.every)
	if f.idle == nil {
		f.idle = time.AfterFunc(f.idleFor(), f.sleep)
	} else {
		f.idle.Reset(f.idleFor())
	}
}

func (f *frames) sleep() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ticker.Stop()
}

// hasTickerField reports whether p has the field findTicker reads.
func hasTickerField(p *tea.Program) bool {
	v := reflect.ValueOf(p).Elem().FieldByName("ticker")
	return v.IsValid() && v.Type() == reflect.TypeFor[*time.Ticker]()
}
