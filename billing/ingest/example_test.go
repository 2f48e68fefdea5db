package ingest_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/billing/ingest"
)

// Read a CSV with an interface column for one period: each interface becomes
// a Series of bytes per 5-minute slot.
func ExampleRead() {
	csv := `timestamp,interface,in_bytes,out_bytes
2026-06-01T00:00:00Z,eth0,37500000,12500000
2026-06-01T00:00:00Z,eth1,1000,2000
2026-06-01T00:05:00Z,eth0,75000000,25000000
`
	from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	series, err := ingest.Read(strings.NewReader(csv), "traffic.csv", ingest.ReadOptions{
		From: from.Unix(), To: from.AddDate(0, 1, 0).Unix(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range series {
		for _, sl := range s.Slots {
			fmt.Printf("%s %s %s in %.0f B (%.1f Mbit/s)\n", s.Format, s.Name,
				time.Unix(sl.Start, 0).UTC().Format("15:04"), sl.In, sl.In*8/billing.SlotSeconds/1e6)
		}
	}

	_, err = ingest.Read(strings.NewReader("timestamp,in_bytes,out_bytes\n600,1,-2\n"), "bad.csv", ingest.ReadOptions{})
	fmt.Println(err)
	// Output:
	// csv eth0 00:00 in 37500000 B (1.0 Mbit/s)
	// csv eth0 00:05 in 75000000 B (2.0 Mbit/s)
	// csv eth1 00:00 in 1000 B (0.0 Mbit/s)
	// bad.csv:2: out_bytes: "-2" is negative
}
