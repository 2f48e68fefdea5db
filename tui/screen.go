package tui

import tea "charm.land/bubbletea/v2"

// screen is one of the UI's screens (overview, route, cost, help): the keys
// it takes and the frame it draws, over the state every screen shares. The
// model routes to the screen shown every key that is not every screen's;
// a screen returns itself as its keys left it, with the command they ask
// for (a re-pricing, say). It gets the shared state as an argument rather
// than keeping a pointer to it, because Model is a value that Bubble Tea
// copies.
type screen interface {
	// Update applies a key (another message is ignored).
	Update(s *state, msg tea.Msg) (screen, tea.Cmd)
	// View is the screen's lines under nothing but the status line: its
	// title first, at most height lines, each cut to width by the model.
	View(s *state, width, height int) string
}
