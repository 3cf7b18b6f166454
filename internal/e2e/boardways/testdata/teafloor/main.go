// Command teafloor is the smallest full-screen bubbletea program: one
// line on the alternate screen. BenchmarkBoardStart starts it as the
// floor of what any bubbletea board costs to reach its first screen.
package main

import tea "charm.land/bubbletea/v2"

type model struct{}

func (model) Init() tea.Cmd { return nil }

func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "q" {
		return m, tea.Quit
	}
	return m, nil
}

func (model) View() tea.View {
	v := tea.NewView("teafloor  q quit")
	v.AltScreen = true
	return v
}

func main() { _, _ = tea.NewProgram(model{}).Run() }
