package route

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withFormat registers f for the rest of the test only.
func withFormat(t *testing.T, f TraceFormat) {
	t.Helper()
	saved := traceFormats
	t.Cleanup(func() { traceFormats = saved })
	traceFormats = append([]TraceFormat(nil), traceFormats...)
	RegisterTraceFormat(f)
}

// hopList is a made-up format: a top-level list of {"ttl", "addr"}, the
// shape no registered format claims. It stands for the formats other
// issues add (RIPE Atlas results are a list too).
var hopList = TraceFormat{
	Rank:   9,
	Name:   "hoplist",
	Title:  "a list of hops",
	Want:   "a hop list (not a list)",
	Source: "hoplist",
	Recognise: func(doc TraceDoc) bool {
		return strings.HasPrefix(strings.TrimSpace(string(doc.Data)), "[")
	},
	Decode: func(data []byte, name string) (*Trace, error) {
		var in []struct {
			TTL  int    `json:"ttl"`
			Addr string `json:"addr"`
		}
		if err := json.Unmarshal(data, &in); err != nil {
			return nil, fmt.Errorf("%s: hop list: %w", name, jsonErr(data, err))
		}
		t := &Trace{Schema: TraceSchema, Source: "hoplist", Hops: []Hop{}}
		for _, h := range in {
			t.Hops = append(t.Hops, Hop{TTL: h.TTL, Sent: 1, Flags: []string{},
				Responders: []Responder{{Addr: h.Addr, Recv: 1}}})
		}
		return t, nil
	},
	Known: func(Responder) Known { return Known{MeanAbs: true} },
	Note:  "from a hop list: one probe per hop",
}

// A format registered in one place is read by ReadTraceFile, and its Known
// and Note reach KnownFigures and the footer; the formats already there
// still read their files.
func TestRegisteredTraceFormatIsRead(t *testing.T) {
	withFormat(t, hopList)
	path := filepath.Join(t.TempDir(), "hops.json")
	if err := os.WriteFile(path, []byte(` [{"ttl":1,"addr":"10.77.0.1"},{"ttl":2,"addr":"10.77.1.1"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadTraceFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Source != "hoplist" || len(tr.Hops) != 2 || tr.Hops[1].TTL != 2 || tr.Hops[1].Responders[0].Addr != "10.77.1.1" {
		t.Fatalf("read %+v", tr)
	}
	if k := KnownFigures(tr, tr.Hops[0].Responders[0]); k != (Known{MeanAbs: true}) {
		t.Errorf("KnownFigures %+v, want only mean_abs", k)
	}
	if n := SourceNote(tr); n != "from a hop list: one probe per hop" {
		t.Errorf("SourceNote %q", n)
	}
	if mtr, err := ReadTraceFile("testdata/mtr-loopback.json"); err != nil || mtr.Source != "mtr-json" {
		t.Errorf("mtr beside the new format: %v, %v", mtr, err)
	}
	if got, want := TraceFormatTitles(), "linecheck JSON, the output of mtr --json, RIPE Atlas traceroute results, Globalping traceroute or mtr measurements, NextTrace --json output, or a list of hops"; got != want {
		t.Errorf("titles %q, want %q", got, want)
	}
}

// The message for a document no format claims lists the formats, in their
// rank order.
func TestUnrecognisedTraceNamesTheFormats(t *testing.T) {
	_, err := ReadTrace(strings.NewReader(`{"a":1}`), "f.json")
	want := "f.json: none of a linecheck.trace/v1 document (no \"schema\"), `mtr --json` output (no \"report\"), RIPE Atlas traceroute results (no \"prb_id\" and \"type\"), a Globalping measurement (no \"type\" and \"results\") or NextTrace --json output (no \"Hops\")"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	_, err = ReadTrace(strings.NewReader("[1, 2]"), "f.json")
	if want := "f.json: not a JSON trace: line 1: want an object {...}, got a list"; err == nil || err.Error() != want {
		t.Errorf("list without a format for it: %v, want %s", err, want)
	}
	withFormat(t, hopList)
	_, err = ReadTrace(strings.NewReader(`{"a":1}`), "f.json")
	want = "f.json: none of a linecheck.trace/v1 document (no \"schema\"), `mtr --json` output (no \"report\"), RIPE Atlas traceroute results (no \"prb_id\" and \"type\"), a Globalping measurement (no \"type\" and \"results\"), NextTrace --json output (no \"Hops\") or a hop list (not a list)"
	if err == nil || err.Error() != want {
		t.Errorf("three formats: %v, want %s", err, want)
	}
}

// The members that mark a format are matched as encoding/json matches
// fields: any case, null as absent; a wrongly typed schema is a JSON error.
func TestTraceFormatRecognition(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"schema in another case", `{"Schema":"linecheck.trace/v1","hops":[]}`, ""},
		{"null schema with a report is mtr", `{"schema":null,"report":{"mtr":{"dst":"127.0.0.1"},"hubs":[]}}`, ""},
		{"null schema alone", `{"schema":null}`, "none of"},
		{"schema not text", `{"schema":5}`, `f.json: not a JSON trace: line 1: field "schema": want text (in quotes), got the number 5`},
		{"null document", `null`, "none of"},
		{"number document", `5`, "f.json: not a JSON trace: line 1: want an object {...}, got the number 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTrace(strings.NewReader(tc.in), "f.json")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestRegisterTraceFormatRefusesADuplicate(t *testing.T) {
	withFormat(t, hopList)
	defer func() {
		if recover() == nil {
			t.Error("a second format with the name mtr was accepted")
		}
	}()
	dup := hopList
	dup.Name, dup.Source = "mtr", "other"
	RegisterTraceFormat(dup)
}
