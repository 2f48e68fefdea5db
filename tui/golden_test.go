package tui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixtureModel is the fixture after every trace and every probe record went
// through Update, at the given size, in monochrome.
func fixtureModel(t testing.TB, w, h int) Model {
	t.Helper()
	feed := FixtureFeed(1)
	m := NewLoaded(context.Background(), feed, FixtureSnapshot(), Options{Width: w, Height: h, NoColor: true})
	var msgs UpdatesMsg
	for _, tr := range FixtureTraces() {
		msgs = append(msgs, tr)
	}
	names := make([]string, 0, len(fixtureRTTs))
	for n := range fixtureRTTs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, r := range FixtureRecords(n) {
			msgs = append(msgs, ProbeMsg{Candidate: n, Record: r})
		}
	}
	m = step(t, m, msgs)
	m.inflight = false
	return m
}

// step sends one message through Update and returns the model.
func step(t testing.TB, m Model, msg tea.Msg) Model {
	t.Helper()
	nm, _ := m.Update(msg)
	return nm.(Model)
}

func press(t testing.TB, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range keys {
		m = step(t, m, keyMsg(k))
	}
	return m
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

func plain(m Model) string {
	lines := strings.Split(ansiStrip(m.Render()), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestGoldenScreens(t *testing.T) {
	screens := []struct {
		name string
		keys []string
	}{
		{"overview", nil},
		{"route", []string{"enter"}},
		{"route-return", []string{"enter", "v"}},
		{"cost", []string{"c"}},
		{"help", []string{"?"}},
	}
	for _, size := range [][2]int{{100, 30}, {80, 24}} {
		for _, sc := range screens {
			name := filepath.Join("testdata", sc.name+"-"+itoa(size[0])+"x"+itoa(size[1])+".golden")
			t.Run(name, func(t *testing.T) {
				m := press(t, fixtureModel(t, size[0], size[1]), sc.keys...)
				got := plain(m)
				checkFrame(t, got, size[0], size[1])
				if *update {
					if err := os.WriteFile(name, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(name)
				if err != nil {
					t.Fatalf("%v (run go test ./tui -run Golden -update)", err)
				}
				if got != string(want) {
					t.Errorf("%s differs (go test ./tui -run Golden -update, then read the diff):\n%s", name, got)
				}
			})
		}
	}
}

// checkFrame: a frame is exactly h lines, none wider than w.
func checkFrame(t *testing.T, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(frame, "\n"), "\n")
	if len(lines) != h {
		t.Errorf("frame has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := lipglossWidth(l); n > w {
			t.Errorf("line %d is %d cells wide, want <= %d: %q", i+1, n, w, l)
		}
	}
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(i)) }
