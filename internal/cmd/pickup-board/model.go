package main

import (
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/pickup-dev/pickup/internal/boardfeed"
	"github.com/pickup-dev/pickup/internal/boardview"
)

// model is the bubbletea program's model: the board's state and the UI,
// both pure (internal/boardview); it only routes messages to them.
type model struct {
	feed  *boardfeed.Feed
	state *boardview.State
	ui    boardview.UI
	w, h  int
	// label is the generation of the pending age-label redraw: only the
	// newest one redraws.
	label int

	program *tea.Program
	fps     int
	frames  frames
	// tick keeps bubbletea's frame ticker running always (what bubbletea
	// does by itself; PICKUP_BOARD_TICK=1, for measuring).
	tick bool
}

// Messages.
type (
	batchMsg  []boardview.Event // from the feed
	detailMsg boardview.Detail  // a session read for the detail view
	waitsMsg  boardview.WaitsFound
	labelMsg  int // the age label is due to change (its generation)
)

func (m *model) Init() tea.Cmd {
	if !m.tick {
		m.frames.start(m.program, m.fps)
		m.frames.wake()
	}
	return m.nextLabel()
}

// nextLabel waits until the header's age label changes: the only redraw
// of a board where nothing happens (boardview.NextRedraw).
func (m *model) nextLabel() tea.Cmd {
	m.label++
	gen := m.label
	now := time.Now()
	return tea.Tick(boardview.NextRedraw(m.state.Updated, now).Sub(now), func(time.Time) tea.Msg { return labelMsg(gen) })
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	// Whatever comes may change the screen: the next frames draw it.
	m.frames.wake()
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
	case tea.KeyPressMsg:
		switch m.ui.Key(m.state, time.Now(), msg.String()) {
		case boardview.Quit:
			return m, tea.Quit
		case boardview.Open:
			id, feed := m.ui.Selected, m.feed
			return m, func() tea.Msg { return detailMsg(feed.Read(id)) }
		}
	case detailMsg:
		if m.ui.Detail != nil && m.ui.Detail.ID == msg.ID {
			d := boardview.Detail(msg)
			m.ui.Detail = &d
		}
	case batchMsg:
		m.state.Apply(msg...)
		return m, tea.Batch(m.waits(msg), m.nextLabel())
	case waitsMsg:
		m.state.Apply(boardview.WaitsFound(msg))
	case labelMsg:
		if int(msg) != m.label {
			return m, nil
		}
		return m, m.nextLabel()
	}
	return m, nil
}

// waits finds again what todo waits on when sessions moved, off the
// event loop (it may look up done/).
func (m *model) waits(batch []boardview.Event) tea.Cmd {
	moved := false
	for _, e := range batch {
		switch e.(type) {
		case boardview.Arrived, boardview.Removed, boardview.Rescanned:
			moved = true
		}
	}
	if !moved || !m.state.HasDeps() {
		return nil
	}
	unfinished, feed := m.state.Unfinished(), m.feed
	return func() tea.Msg {
		return waitsMsg(boardview.WaitsFound{At: time.Now(), Waits: feed.Waits(unfinished)})
	}
}

func (m *model) View() tea.View {
	v := tea.NewView(boardview.Render(m.state, &m.ui, boardview.Options{Width: m.w, Height: m.h, Now: time.Now(), Color: true}))
	v.AltScreen = true
	m.frames.wake() // keep the ticker until this view is flushed (frames)
	return v
}
