package geo

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// Expected distances come from an independent haversine in Python over the
// same coordinates (R = 6371.0088 km), run as:
//
//	/usr/bin/python3 -c 'import math; ...hv(a,b) = 2R·asin(√(sin²(Δφ/2)+cosφ1·cosφ2·sin²(Δλ/2)))'
//
// (the script is in docs/route.md); they agree with the published great-circle figures
// (HK–Shanghai 1 227 km, Tokyo–LA 8 817 km: ours 8 819, the doc's Tokyo point
// differs slightly; London–New York ≈ 5 570 km is the commonly quoted figure).
func TestGreatCircleAndFloorHandComputed(t *testing.T) {
	cases := []struct {
		a, b    string
		km      float64
		floorMs float64
	}{
		{"Hong Kong", "Shanghai", 1227.032, 12.2703},
		{"Tokyo", "Los Angeles", 8819.405, 88.1941},
		{"Hong Kong", "Guangzhou", 129.320, 1.2932},
		{"Los Angeles", "Shanghai", 10434.302, 104.3430},
		{"Shanghai", "Tokyo", 1754.267, 17.5427},
		{"Frankfurt", "Singapore", 10258.049, 102.5805},
		{"London", "New York", 5570.230, 55.7023},
		{"Sydney", "Los Angeles", 12073.523, 120.7352},
	}
	for _, c := range cases {
		a, okA := City(c.a)
		b, okB := City(c.b)
		if !okA || !okB {
			t.Fatalf("city %q or %q missing", c.a, c.b)
		}
		if km := GreatCircleKm(a, b); math.Abs(km-c.km) > 0.01 {
			t.Errorf("%s–%s: %.3f km, want %.3f", c.a, c.b, km, c.km)
		}
		if km := GreatCircleKm(b, a); math.Abs(km-c.km) > 0.01 {
			t.Errorf("%s–%s reversed: %.3f km, want %.3f", c.b, c.a, km, c.km)
		}
		if f := FloorRTTms(a, b); math.Abs(f-c.floorMs) > 0.0005 {
			t.Errorf("%s–%s floor: %.4f ms, want %.4f", c.a, c.b, f, c.floorMs)
		}
	}
	// Geometry sanity independent of the table: a quarter meridian and half the equator.
	if d := GreatCircleKm(Location{Lat: 0, Lon: 0}, Location{Lat: 90, Lon: 0}); math.Abs(d-math.Pi*EarthRadiusKm/2) > 1e-6 {
		t.Errorf("equator–pole %.6f", d)
	}
	if d := GreatCircleKm(Location{Lat: 0, Lon: -90}, Location{Lat: 0, Lon: 90}); math.Abs(d-math.Pi*EarthRadiusKm) > 1e-6 {
		t.Errorf("antipodes %.6f", d)
	}
}

func TestCityAliases(t *testing.T) {
	cases := map[string]string{
		"Hong Kong": "Hong Kong", "hong kong": "Hong Kong", "HK": "Hong Kong", "hongkong": "Hong Kong",
		"HONG-KONG": "Hong Kong", "香港": "Hong Kong", "Tokyo": "Tokyo", "nrt": "Tokyo",
		"Los Angeles": "Los Angeles", "LAX": "Los Angeles", "la": "Los Angeles", "shanghai": "Shanghai",
		"Beijing": "Beijing", "Peking": "Beijing", "Guangzhou": "Guangzhou", "Canton": "Guangzhou",
		"Shenzhen": "Shenzhen", "Chengdu": "Chengdu", "Singapore": "Singapore", "SG": "Singapore",
		"Frankfurt": "Frankfurt", "San Jose": "San Jose", "Seattle": "Seattle", "Ashburn": "Ashburn",
		"New York": "New York", "NYC": "New York", "London": "London", "Seoul": "Seoul", "Taipei": "Taipei",
		"Xian": "Xi'an", "xi'an": "Xi'an", " tokyo ": "Tokyo", "São Paulo": "Sao Paulo",
	}
	for in, want := range cases {
		got, ok := City(in)
		if !ok || got.Name != want {
			t.Errorf("City(%q) = %q %v, want %q", in, got.Name, ok, want)
		}
	}
	for _, bad := range []string{"", "Atlantis", "Hong"} {
		if _, ok := City(bad); ok {
			t.Errorf("City(%q) found", bad)
		}
	}
	if n := len(Cities()); n < 60 {
		t.Errorf("only %d cities", n)
	}
}

func TestCityTableErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"A\t91\t0\n", `x.tsv:1: column "lat"`},
		{"A\t0\t0\nB\t0\tx\n", `x.tsv:2: column "lon"`},
		{"A\t1\t2\ta\nB\t1\t2\tA\n", `x.tsv:2: name "a" already names A`},
		{"A 1 2\n", "x.tsv:1: want name"},
	} {
		_, _, err := parseCities("x.tsv", c.body)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want %q", c.body, err, c.want)
		}
	}
}

func TestStretch(t *testing.T) {
	sh, _ := City("Shanghai")
	hk, _ := City("Hong Kong")
	la, _ := City("Los Angeles")
	tyo, _ := City("Tokyo")
	cases := []struct {
		name      string
		a, b      Location
		min       float64
		floor     float64 // hand-computed (python, see TestGreatCircleAndFloorHandComputed)
		stretch   float64
		wantFlags []string
	}{
		{"Shanghai–HK direct interconnect", sh, hk, 30, 12.2703, 2.4449, nil},
		{"Shanghai–HK anycast (below floor)", sh, hk, 8, 12.2703, 0.6520, []string{FlagBelowFloor}},
		{"Shanghai–HK detour via the US (2·12.27+25 = 49.5 ms)", sh, hk, 180, 12.2703, 14.6696, []string{FlagFarAboveReference}},
		{"Shanghai–LA premium", sh, la, 130, 104.3430, 1.2459, nil},
		{"Shanghai–LA 163 at peak above 233.7 ms", sh, la, 240, 104.3430, 2.3001, []string{FlagFarAboveReference}},
		{"Shanghai–Tokyo CMI", sh, tyo, 45, 17.5427, 2.5652, nil},
		{"no measurement", sh, hk, 0, 12.2703, 0, nil},
		// Within one city the floor is no yardstick (issue 35): no stretch,
		// flagged same-city, whatever the RTT; a detour is still flagged.
		// Shanghai to a point 0.27° of latitude north: ≈ 30.02 km (R = 6371.0088 km),
		// floor 0.300 ms; 0.50° north ≈ 55.60 km, floor 0.556 ms, stretch 1.2/0.556 = 2.158.
		{"same place: floor 0, no stretch, same-city", hk, hk, 0.4, 0, 0, []string{FlagSameCity}},
		{"same place, no measurement: still same-city", hk, hk, 0, 0, 0, []string{FlagSameCity}},
		{"30 km apart: same city", sh, Location{Lat: sh.Lat + 0.27, Lon: sh.Lon}, 1.2, 0.3002, 0, []string{FlagSameCity}},
		{"30 km apart, 40 ms: same city but a detour", sh, Location{Lat: sh.Lat + 0.27, Lon: sh.Lon}, 40, 0.3002, 0, []string{FlagSameCity, FlagFarAboveReference}},
		{"56 km apart: two cities, stretch computed", sh, Location{Lat: sh.Lat + 0.5, Lon: sh.Lon}, 1.2, 0.5560, 2.1583, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Stretch(c.a, c.b, c.min)
			if math.Abs(r.FloorMs-c.floor) > 0.0005 || math.Abs(r.Stretch-c.stretch) > 0.0005 {
				t.Errorf("floor %.4f stretch %.4f, want %.4f %.4f", r.FloorMs, r.Stretch, c.floor, c.stretch)
			}
			if !slices.Equal(r.Flags, c.wantFlags) {
				t.Errorf("flags %v, want %v", r.Flags, c.wantFlags)
			}
		})
	}
	if r := Stretch(sh, hk, math.NaN()); r.Stretch != 0 || r.MinRTTms != 0 || len(r.Flags) != 0 {
		t.Errorf("NaN min: %+v", r)
	}
}
