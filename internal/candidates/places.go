package candidates

// The schema's adapters over the city table (internal/geo) and the carriers
// users may name (internal/route).

import (
	"slices"

	"github.com/linecheck/linecheck/internal/geo"
	"github.com/linecheck/linecheck/internal/route"
)

func cityLocation(name string) (geo.Location, bool) { return geo.City(name) }

// suggestCities is what an unknown city is refused with: the three nearest
// names of the table.
func suggestCities(name string) []string { return geo.SuggestCities(name, 3) }

// Location is where the place lies: its city in the embedded table, else
// its coordinates; false when it has neither.
func Location(p Place) (geo.Location, bool) {
	if p.City != "" {
		return geo.City(p.City)
	}
	if p.Lat != nil && p.Lon != nil {
		return geo.Location{Name: p.String(), Lat: *p.Lat, Lon: *p.Lon}, true
	}
	return geo.Location{}, false
}

// userCarrier tells whether c is a carrier users and targets may name.
func userCarrier(c string) bool { return slices.Contains(route.UserCarriers, c) }
