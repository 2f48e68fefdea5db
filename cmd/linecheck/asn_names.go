package main

import (
	"fmt"
	"io"

	"github.com/linecheck/linecheck/internal/route"
)

// noASNUsage is the help of --no-asn, the same for every command that names hops.
const noASNUsage = "no AS number, network name or country per hop and no AS path (mtr without -z); the line class still uses the carrier table and --asn-db"

// hopNamesDB is the chain of sources a command that names hops uses: the
// --prefix-table (table may be nil), the --asn-db file (path may be ""),
// then the offline dataset (the updated
// copy from `linecheck asn update` when newer, else the bundled snapshot)
// unless noASN. A cached copy passed over is said on stderr.
func hopNamesDB(path string, noASN bool, table *route.PrefixTable, stderr io.Writer) (route.ASNDB, error) {
	var file route.ASNDB
	if path != "" {
		d, err := route.LoadASNDB(path)
		if err != nil {
			return nil, err
		}
		file = d
	}
	n, note, err := route.NewNames(file, !noASN)
	if err != nil {
		return nil, err
	}
	n.Table = table
	if note != "" && stderr != nil {
		fmt.Fprintln(stderr, "linecheck:", note)
	}
	return n, nil
}
