package ingest

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/linecheck/linecheck/billing"
)

// The grid mode of the CSV reader. A file in memory billed for a period,
// whose rows are bytes per interval (or bit/s) on the 5-minute grid, is
// read with each kept row written straight into its interface's cell of a
// grid over the period and its margins, instead of being kept as a row and
// put on the grid afterwards: the cells become the series' slots in place.
// That is a third of the memory (fresh memory costs page faults) and no
// second pass over the rows.
//
// It gives exactly what the rows would have given, or nothing: a row off
// the grid, a gap value, or two rows in one cell stop it while reading; rows
// out of file order, a first step other than 300 s, or a single row stop it
// while building. A stopped grid read reads the file again the general way
// (readCSV), so that every message, line number and warning is the general
// path's own.

// csvGridRows turns the grid mode on (tests compare it with the rows).
var csvGridRows = true

// errCSVGrid says the grid mode stopped: read the rows instead.
var errCSVGrid = errors.New("csv: not on the grid")

// csvGridStops counts the grid reads that stopped (for tests).
var csvGridStops atomic.Int64

// csvGrids are the grids of one read, shared by its parsers.
type csvGrids struct {
	lo    int64 // the time of cell 0: the window's start, aligned to 300 s
	cells int   // cells per grid
	left  int64 // cells that may still be allocated (a bound on memory)
	mu    sync.Mutex
	m     map[string]*csvGrid
	off   atomic.Bool // stopped: a row that the grid cannot hold
	// bases[seq] is the number of lines before chunk seq (set in order by
	// csvStream as it merges the chunks).
	bases []int64
}

// csvGrid is one interface's cells. While reading, a cell's Start holds the
// tag of the row in it (chunk seq+1 in the high 32 bits, the line in the
// chunk in the low ones; 0 when empty), claimed atomically so that two
// rows for one cell (a duplicate) are seen whichever parser has them.
type csvGrid struct {
	cells []billing.Slot
}

// newCSVGrids returns the grids for a read of data, or nil when the grid
// mode does not apply: no period, counters, a window not on the 300 s
// grid, or input that cannot be read again.
func newCSVGrids(lay *csvLayout, opts ReadOptions, data []byte) *csvGrids {
	w := opts.window()
	lo, hi := w.from-csvMargin, w.to+csvMargin
	if !csvGridRows || data == nil || !w.bounded() || lay.counters() || lo < 0 || lo%billing.SlotSeconds != 0 || hi%billing.SlotSeconds != 0 {
		return nil
	}
	n := (hi - lo) / billing.SlotSeconds
	// The grids may take up to 24 bytes a cell for 4 bytes of input (rows of
	// a dense export are ~40 bytes for a 24-byte cell): beyond that, an
	// export with many sparse interfaces, the rows take less.
	budget := max(int64(len(data))*4, 64<<20) / 24
	if n > budget {
		return nil
	}
	return &csvGrids{lo: lo, cells: int(n), left: budget, m: map[string]*csvGrid{}}
}

// get returns the grid of the interface, made on first use; nil when the
// memory bound is reached (the grid mode then stops).
func (gs *csvGrids) get(name string) *csvGrid {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if g := gs.m[name]; g != nil {
		return g
	}
	if gs.left < int64(gs.cells) {
		return nil
	}
	gs.left -= int64(gs.cells)
	g := &csvGrid{cells: make([]billing.Slot, gs.cells)}
	gs.m[name] = g
	return g
}

// lookup returns the grid of the interface, nil when none was made.
func (gs *csvGrids) lookup(name string) *csvGrid {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return gs.m[name]
}

// put writes a kept row into its cell, or stops the grid mode.
func (p *csvParser) put(e *csvName, pt csvRow) {
	gs := p.grids
	if e.grid == nil {
		if e.grid = gs.get(e.name); e.grid == nil {
			gs.off.Store(true)
			return
		}
	}
	d := pt.t - gs.lo // ≥ 0: kept rows lie inside the window
	if pt.unknown || d%billing.SlotSeconds != 0 || d < 0 || d/billing.SlotSeconds >= int64(gs.cells) {
		gs.off.Store(true)
		return
	}
	cell := &e.grid.cells[d/billing.SlotSeconds]
	if !atomic.CompareAndSwapInt64(&cell.Start, 0, int64(p.seq+1)<<32|int64(pt.line)) {
		gs.off.Store(true) // a second row for the cell
		return
	}
	cell.In, cell.Out = pt.in, pt.out
}

// build turns an interface's cells into its slots, in place, doing what
// addRegular does with the same rows: they are in ascending time order,
// all on the grid, so once the first two are 300 s apart the step is 300 s
// and no later row can change it or be refused. It returns false, leaving
// the grid spoiled, when that does not hold: the caller reads the rows.
func (gs *csvGrids) build(b *builder, g *csvGrid, spec regular) bool {
	if g == nil { // every row of the interface was outside the window
		b.s.Step = billing.SlotSeconds
		b.s.Slots = []billing.Slot{}
		return true
	}
	cells := g.cells
	var prevTag, prevT int64
	n, w := 0, 0
	for c := range cells {
		tag := cells[c].Start
		if tag == 0 {
			continue
		}
		if tag <= prevTag {
			return false // out of file order: the rows tell which line is wrong
		}
		t := gs.lo + int64(c)*billing.SlotSeconds
		if n == 1 && t-prevT != billing.SlotSeconds {
			return false // another step, or gaps first: addRegular infers it
		}
		n++
		prevTag, prevT = tag, t
		in, out := cells[c].In, cells[c].Out
		if spec.rate {
			in, out = in*float64(billing.SlotSeconds), out*float64(billing.SlotSeconds)
		}
		b.checkRate(gs.bases[tag>>32-1]+tag&(1<<32-1), in, out, billing.SlotSeconds)
		start := t
		if spec.end {
			start -= billing.SlotSeconds
		}
		// Cells are read before they are written: w counts slots inside the
		// period, which starts a margin (288 cells) after cell 0.
		if start >= b.win.from && start < b.win.to {
			cells[w] = billing.Slot{Start: start, In: in, Out: out}
			w++
		}
	}
	if n == 1 {
		return false // a single sample: addRegular warns
	}
	b.s.Step = billing.SlotSeconds
	b.s.Slots = cells[:w:w]
	return true
}
