package route

import (
	"encoding/json"
	"fmt"
	"math"
)

// linecheck's own trace document (linecheck.trace/v1, what trace --format
// json writes), read back as it was written: Source becomes "replay".
func init() {
	RegisterTraceFormat(TraceFormat{
		Name:   "linecheck",
		Title:  "linecheck JSON",
		Want:   fmt.Sprintf("a %s document (no \"schema\")", TraceSchema),
		Source: "replay",
		Recognise: func(doc TraceDoc) bool {
			_, ok := doc.Member("schema")
			return ok
		},
		Decode: readOwn,
	})
}

func readOwn(data []byte, name string) (*Trace, error) {
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: not a JSON trace: %w", name, jsonErr(data, err))
	}
	schema := head.Schema
	if schema == BacktraceSchema {
		return nil, fmt.Errorf("%s: a %s document (several targets), not one trace: give it where a return recording is read (recorded.return), or pick one result's \"trace\"", name, BacktraceSchema)
	}
	if schema != TraceSchema {
		return nil, fmt.Errorf("%s: schema %q, want %q", name, schema, TraceSchema)
	}
	var t Trace
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", name, jsonErr(data, err))
	}
	prev := 0
	for i, h := range t.Hops {
		if h.TTL < 1 || h.TTL <= prev {
			return nil, fmt.Errorf("%s: hops[%d].ttl: %d is not above the previous TTL %d", name, i, h.TTL, prev)
		}
		prev = h.TTL
		if h.Loss < 0 || h.Loss > 1 || math.IsNaN(h.Loss) {
			return nil, fmt.Errorf("%s: hops[%d].loss: %g is not a fraction 0..1", name, i, h.Loss)
		}
		if h.Sent < 0 {
			return nil, fmt.Errorf("%s: hops[%d].sent: %d is negative", name, i, h.Sent)
		}
		if t.Hops[i].Flags == nil {
			t.Hops[i].Flags = []string{}
		}
		if t.Hops[i].Responders == nil {
			t.Hops[i].Responders = []Responder{}
		}
		for j, r := range h.Responders {
			if r.Recv < 0 {
				return nil, fmt.Errorf("%s: hops[%d].responders[%d].recv: %d is negative", name, i, j, r.Recv)
			}
		}
	}
	if t.Hops == nil {
		t.Hops = []Hop{}
	}
	if err := checkMultipath(&t, name); err != nil {
		return nil, err
	}
	t.Source = "replay"
	return &t, nil
}
