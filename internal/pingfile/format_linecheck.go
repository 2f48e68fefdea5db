package pingfile

import (
	"io"

	"github.com/linecheck/linecheck/probe"
)

// linecheck's own probe stream (`ping --stream`, linecheck.probe/v1 NDJSON):
// one stream without a vantage. It is also what a file no other format
// claims is read as, so that its errors name the line and field.
func init() {
	register(Format{
		Rank:      1,
		Name:      "linecheck",
		Title:     "linecheck's probe stream (ping --stream)",
		Recognise: func(h Head) bool { return !h.List && h.Members["schema"] == probe.StreamSchema },
		Read:      readLinecheck,
		Scan:      probe.ScanStream,
	})
}

// readLinecheck returns probe.ReadStream's errors as they are (a
// *probe.StreamError for a record of the wrong shape), for the caller to
// word.
func readLinecheck(r io.Reader, name string) ([]Stream, error) {
	recs, err := probe.ReadStream(r, name)
	if err != nil {
		return nil, err
	}
	return []Stream{{Records: recs}}, nil
}
