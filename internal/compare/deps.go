package compare

// Adapters over the route analysis (internal/route), kept in one place so
// that the rest of the package reads in its own terms.

import (
	"path/filepath"
	"strings"

	"github.com/linecheck/linecheck/internal/route"
)

func cityLocation(name string) (route.Location, bool) { return route.City(name) }

func placeLocation(p Place) (route.Location, bool) {
	if p.City != "" {
		return route.City(p.City)
	}
	if p.Lat != nil && p.Lon != nil {
		return route.Location{Name: p.String(), Lat: *p.Lat, Lon: *p.Lon}, true
	}
	return route.Location{}, false
}

func loadASNDB(path string) (route.ASNDB, error) {
	if path == "" {
		return nil, nil
	}
	return route.LoadASNDB(path)
}

// readTrace reads a recorded trace: our JSON or `mtr --json`.
func readTrace(path string) (*route.Trace, error) { return route.ReadTraceFile(path) }

// classify annotates both traces (carrier per responder, class per
// direction) and joins them. The evidence reported is the return path's when
// it decided the class (that is what users download over), else the forward's.
func classify(fwd, ret *route.Trace, db route.ASNDB) (class, direction string, ev *route.LineEvidence, fwdClass, retClass string, notes []string) {
	if fwd != nil {
		route.Annotate(fwd, db)
		fwdClass = fwd.LineClass
	}
	if ret != nil {
		route.Annotate(ret, db)
		retClass = ret.LineClass
	}
	class, direction, notes = route.CombineDirections(fwd, ret)
	switch {
	case ret != nil && ret.LineClass == class && (direction == "both" || direction == "return"):
		ev = ret.LineEvidence
	case fwd != nil && fwd.LineClass == class:
		ev = fwd.LineEvidence
	case ret != nil:
		ev = ret.LineEvidence
	}
	return
}

// relTo names path relative to dir when it lies below it, for reports.
func relTo(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}
