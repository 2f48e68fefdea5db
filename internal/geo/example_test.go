package geo_test

import (
	"fmt"

	"github.com/linecheck/linecheck/internal/geo"
)

func ExampleStretch() {
	sh, _ := geo.City("Shanghai")
	hk, _ := geo.City("hong kong")
	fmt.Printf("%.1f km\n", geo.GreatCircleKm(sh, hk))
	for _, min := range []float64{27, 8, 180} {
		s := geo.Stretch(sh, hk, min)
		fmt.Printf("min %5.1f ms  floor %.2f ms  stretch %.2f  %v\n", s.MinRTTms, s.FloorMs, s.Stretch, s.Flags)
	}
	// Output:
	// 1227.0 km
	// min  27.0 ms  floor 12.27 ms  stretch 2.20  []
	// min   8.0 ms  floor 12.27 ms  stretch 0.65  [below-floor]
	// min 180.0 ms  floor 12.27 ms  stretch 14.67  [far-above-reference]
}
