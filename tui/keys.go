package tui

import "charm.land/bubbles/v2/key"

// keyMap holds every binding; the help screen is rendered from it.
type keyMap struct {
	Quit, Help, Back, Pause                      key.Binding
	Up, Down, PrevCand, NextCand                 key.Binding
	Route, Cost, Return, Carrier, Names, Reset   key.Binding
	Path                                         key.Binding
	SortNext, SortPrev, SortInvert               key.Binding
	Method, MethodPrev, Direction, DirectionPrev key.Binding
	ScaleUp, ScaleDown, ScaleReset               key.Binding
	Usage, UsagePrev                             key.Binding
	Throughput                                   key.Binding
}

var keys = keyMap{
	Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q ctrl+c", "quit (from any screen)")),
	Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help on/off")),
	Back:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close the detail view or help")),
	Pause:    key.NewBinding(key.WithKeys("space", "p"), key.WithHelp("space p r", "pause / resume updates · r: reset the statistics, as mtr")),
	Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑↓ k j", "previous / next candidate (route: scroll hops)")),
	Down:     key.NewBinding(key.WithKeys("down", "j")),
	PrevCand: key.NewBinding(key.WithKeys("["), key.WithHelp("[ ]", "previous / next candidate (in detail views)")),
	NextCand: key.NewBinding(key.WithKeys("]")),
	Route:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "route detail: hops, loss, RTT chart")),
	Cost:     key.NewBinding(key.WithKeys("c", "tab"), key.WithHelp("c tab", "cost detail: traffic, 95th, breakdown")),
	// r and n are mtr's (reset, names); the route's own keys avoid them.
	Return:        key.NewBinding(key.WithKeys("v"), key.WithHelp("v w n f", "route: other direction · w: next carrier · n: names · f: next path")),
	Carrier:       key.NewBinding(key.WithKeys("w")),
	Names:         key.NewBinding(key.WithKeys("n")), // reverse DNS of live hops on/off, as mtr
	Path:          key.NewBinding(key.WithKeys("f")), // next path of a multipath trace (help: with Return)
	Reset:         key.NewBinding(key.WithKeys("r")), // probe statistics afresh, as mtr (help: with Pause)
	SortNext:      key.NewBinding(key.WithKeys("s"), key.WithHelp("s S", "sort by next / previous column")),
	SortPrev:      key.NewBinding(key.WithKeys("S")),
	SortInvert:    key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "invert the sort order")),
	Method:        key.NewBinding(key.WithKeys("m"), key.WithHelp("m M", "cost: next / previous 95th method")),
	MethodPrev:    key.NewBinding(key.WithKeys("M")),
	Direction:     key.NewBinding(key.WithKeys("d"), key.WithHelp("d D", "cost: next / previous direction rule")),
	DirectionPrev: key.NewBinding(key.WithKeys("D")),
	ScaleUp:       key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+ -", "cost: scale the traffic up / down")),
	ScaleDown:     key.NewBinding(key.WithKeys("-")),
	ScaleReset:    key.NewBinding(key.WithKeys("0"), key.WithHelp("0", "cost: traffic as recorded (×1)")),
	Usage:         key.NewBinding(key.WithKeys("u"), key.WithHelp("u U", "used GPU hours up / down (re-prices at once)")),
	UsagePrev:     key.NewBinding(key.WithKeys("U")),
	Throughput:    key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "live: run the throughput tests (bandwidth_test) again now")),
}

// helpGroups orders the bindings on the help screen.
func helpGroups() []struct {
	Title string
	Keys  []key.Binding
} {
	k := keys
	return []struct {
		Title string
		Keys  []key.Binding
	}{
		{"everywhere", []key.Binding{k.Quit, k.Help, k.Back, k.Pause, k.Up, k.Down, k.PrevCand, k.NextCand}},
		{"overview", []key.Binding{k.Route, k.Cost, k.SortNext, k.SortInvert, k.Throughput}},
		{"route detail", []key.Binding{k.Return, k.Carrier, k.Names}},
		{"cost detail", []key.Binding{k.Method, k.Direction, k.ScaleUp, k.ScaleReset, k.Usage}},
	}
}
