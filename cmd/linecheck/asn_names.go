package main

import (
	"fmt"
	"io"

	"github.com/linecheck/linecheck/internal/route"
)

// noASNUsage is the help of --no-asn, the same for every command that names hops.
const noASNUsage = "no AS number, network name or country per hop and no AS path (mtr without -z); the line class still uses the carrier table and --asn-db"

// hopNamesDB loads the hop names as route.LoadHopNames does and says on
// stderr why a cached copy of the dataset was passed over.
func hopNamesDB(path string, noASN bool, table *route.PrefixTable, stderr io.Writer) (route.ASNDB, error) {
	db, note, err := route.LoadHopNames(path, noASN, table)
	if err != nil {
		return nil, err
	}
	if note != "" && stderr != nil {
		fmt.Fprintln(stderr, "linecheck:", note)
	}
	return db, nil
}
