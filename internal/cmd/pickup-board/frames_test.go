package main

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestFindTicker: the board stops bubbletea's frame ticker while idle by
// reaching its unexported field; this fails if a bubbletea upgrade moved it
// (the board would then tick, as bubbletea does, and never be idle).
func TestFindTicker(t *testing.T) {
	p := tea.NewProgram(nil)
	if findTicker(p) != nil {
		t.Fatalf("a ticker before the program runs")
	}
	// The field exists and has the type: findTicker reads it (nil until
	// Run starts the renderer).
	if !hasTickerField(p) {
		t.Fatalf("tea.Program has no field ticker *time.Ticker any more: frames cannot stop the frame ticker of an idle board")
	}
}
