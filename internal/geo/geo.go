// Package geo is the geography of stretch: a bundled table of cities
// (data/cities.tsv, WGS84), the great-circle distance between two of them,
// the physical floor of a round trip over fibre between them and the
// stretch of a measured RTT over that floor. It is pure: the table is
// embedded, nothing is looked up online.
//
// Definitions (docs/definitions.md): floor = 2·great-circle distance /
// (200 km per ms of fibre); stretch = measured min RTT / floor.
package geo

import (
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/linecheck/linecheck/internal/tsv"
)

// Location is a named point on the globe (WGS84 degrees).
type Location struct {
	Name string
	Lat  float64
	Lon  float64
}

// EarthRadiusKm is the mean Earth radius (IUGG) used by GreatCircleKm.
const EarthRadiusKm = 6371.0088

// FibreKmPerMs is how far light travels in fibre per millisecond (≈ c/1.5).
const FibreKmPerMs = 200.0

//go:embed data/cities.tsv
var citiesTSV string

var (
	citiesOnce sync.Once
	cityIndex  map[string]Location
	cityList   []Location
	citiesErr  error
)

// parseCities reads name, lat, lon, aliases (comma-separated); '#' comments.
func parseCities(name, text string) (map[string]Location, []Location, error) {
	idx := map[string]Location{}
	var list []Location
	err := tsv.Each(name, text, func(f []string) error {
		if len(f) < 3 {
			return fmt.Errorf("want name, lat, lon[, aliases], got %d columns", len(f))
		}
		lat, err := strconv.ParseFloat(f[1], 64)
		if err != nil || lat < -90 || lat > 90 {
			return fmt.Errorf("column \"lat\": %q is not a latitude", f[1])
		}
		lon, err := strconv.ParseFloat(f[2], 64)
		if err != nil || lon < -180 || lon > 180 {
			return fmt.Errorf("column \"lon\": %q is not a longitude", f[2])
		}
		loc := Location{Name: f[0], Lat: lat, Lon: lon}
		keys := []string{f[0]}
		if len(f) > 3 && f[3] != "" {
			keys = append(keys, strings.Split(f[3], ",")...)
		}
		for _, k := range keys {
			k = cityKey(k)
			if k == "" {
				continue
			}
			if prev, dup := idx[k]; dup && prev.Name != loc.Name {
				return fmt.Errorf("name %q already names %s", k, prev.Name)
			}
			idx[k] = loc
		}
		list = append(list, loc)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return idx, list, nil
}

// cityKey folds case, spaces, dashes, dots and apostrophes so that "Hong
// Kong", "hongkong", "HONG-KONG" and "Xi'an"/"Xian" meet.
func cityKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.NewReplacer(" ", "", "-", "", "_", "", ".", "", "'", "", "’", "").Replace(s)
}

func loadCities() {
	citiesOnce.Do(func() {
		cityIndex, cityList, citiesErr = parseCities("internal/route/data/cities.tsv", citiesTSV)
	})
	if citiesErr != nil {
		// The table is embedded and checked by a test; a broken build is a bug.
		panic(citiesErr)
	}
}

// City finds a city in the embedded table by name or alias (IATA code,
// common abbreviation, Chinese name), case-insensitively.
func City(name string) (Location, bool) {
	loadCities()
	loc, ok := cityIndex[cityKey(name)]
	return loc, ok
}

// Cities lists the embedded table in file order.
func Cities() []Location {
	loadCities()
	return append([]Location(nil), cityList...)
}

// GreatCircleKm is the haversine distance between a and b on a sphere of
// radius EarthRadiusKm.
func GreatCircleKm(a, b Location) float64 {
	rad := math.Pi / 180
	p1, p2 := a.Lat*rad, b.Lat*rad
	dp := p2 - p1
	dl := (b.Lon - a.Lon) * rad
	h := math.Sin(dp/2)*math.Sin(dp/2) + math.Cos(p1)*math.Cos(p2)*math.Sin(dl/2)*math.Sin(dl/2)
	return 2 * EarthRadiusKm * math.Asin(math.Min(1, math.Sqrt(h)))
}

// FloorRTTms is the physical floor of a round trip between a and b: twice
// the great-circle distance over 200 km of fibre per ms.
func FloorRTTms(a, b Location) float64 {
	return 2 * GreatCircleKm(a, b) / FibreKmPerMs
}

// Stretch flags.
const (
	// FlagBelowFloor: the measured RTT is faster than light in fibre allows
	// (an anycast address answering nearby, or a wrong location).
	FlagBelowFloor = "below-floor"
	// FlagFarAboveReference: min RTT above 2·floor + 25 ms — a detour (for
	// example a Hong Kong line reached through the US), not distance.
	FlagFarAboveReference = "far-above-reference"
	// FlagSameCity: the two places are within SameCityKm of each other,
	// where the physical floor (under SameCityFloorMs) is no yardstick: a
	// server a few km away answers in a millisecond or two of access and
	// switching, many times a floor of hundredths of a millisecond. No
	// stretch is computed (issue 35: the stretch check failed every server
	// in the vantage's own city).
	FlagSameCity = "same-city"
)

// SameCityKm is the distance under which two places count as one city for
// stretch: 50 km, a floor of 0.5 ms, about what access and switching add
// inside one metro (same-city RTTs are under ~2 ms).
const SameCityKm = 50.0

// SameCityFloorMs is the physical floor of SameCityKm (FloorRTTms).
const SameCityFloorMs = 2 * SameCityKm / FibreKmPerMs

// FarAboveSlackMs is the fixed allowance (access networks, last mile) in the
// far-above-reference threshold 2·floor + FarAboveSlackMs.
const FarAboveSlackMs = 25.0

// StretchResult compares a measured minimum RTT with the physical floor.
type StretchResult struct {
	FloorMs  float64
	MinRTTms float64
	// Stretch = MinRTTms / FloorMs; 0 within one city (FlagSameCity) or
	// without a measurement.
	Stretch float64
	Flags   []string
}

// Stretch compares the min RTT measured from vantage to target with the
// physical floor between them. Thresholds (docs/route.md: a ratio above
// 1.6–1.8 suggests a detour; mainland–HK above 60 ms is a red flag):
// below-floor when minRTT < floor, far-above-reference when minRTT >
// 2·floor + 25 ms. A minRTT ≤ 0 (nothing received) gives no stretch and no
// flags.
func Stretch(vantage, target Location, minRTTms float64) StretchResult {
	return StretchOverFloor(FloorRTTms(vantage, target), minRTTms)
}

// StretchOverFloor is Stretch for a floor already known (FloorRTTms): the
// TUI keeps a candidate's floor and re-applies it as RTTs arrive.
//
// Within one city (a floor under SameCityFloorMs, 0 for the same place) the
// result has no stretch and the flag FlagSameCity, with or without a
// measurement: the places decide it; a min RTT above 25 ms there is still
// far-above-reference (a detour through another city).
func StretchOverFloor(floorMs, minRTTms float64) StretchResult {
	res := StretchResult{FloorMs: floorMs, MinRTTms: minRTTms}
	sameCity := floorMs < SameCityFloorMs
	if sameCity {
		res.Flags = append(res.Flags, FlagSameCity)
	}
	if minRTTms <= 0 || math.IsNaN(minRTTms) || math.IsInf(minRTTms, 0) {
		res.MinRTTms = 0
		return res
	}
	if sameCity {
		if minRTTms > 2*res.FloorMs+FarAboveSlackMs {
			res.Flags = append(res.Flags, FlagFarAboveReference)
		}
		return res
	}
	if res.FloorMs > 0 {
		res.Stretch = minRTTms / res.FloorMs
	}
	if minRTTms < res.FloorMs {
		res.Flags = append(res.Flags, FlagBelowFloor)
	}
	if minRTTms > 2*res.FloorMs+FarAboveSlackMs {
		res.Flags = append(res.Flags, FlagFarAboveReference)
	}
	return res
}
