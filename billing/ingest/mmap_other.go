//go:build !unix

package ingest

import "os"

// mapFile does not map files on this system: they are read.
func mapFile(*os.File) ([]byte, func(), bool) { return nil, nil, false }

// dropPages does nothing where files are not mapped.
func dropPages([]byte) {}
