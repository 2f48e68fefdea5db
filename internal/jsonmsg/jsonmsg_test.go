package jsonmsg

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type rtt struct {
	P50 float64 `json:"p50"`
}

type responder struct {
	Addr string `json:"addr"`
	RTT  rtt    `json:"rtt_ms"`
}

type hop struct {
	TTL        int         `json:"ttl"`
	Responders []responder `json:"responders"`
	Flags      []string    `json:"flags"`
}

type doc struct {
	Target string `json:"target"`
	Hops   []hop  `json:"hops"`
	Report struct {
		Hubs []struct {
			Count int `json:"count"`
		} `json:"hubs"`
	} `json:"report"`
}

// The expected messages are written from the documents by hand: the line
// counted in the text, the element counted from 1.
func TestDescribeNamesLineElementAndField(t *testing.T) {
	cases := []struct{ in, want string }{
		{"{\"hops\": [\n {\"ttl\": 1},\n {\"ttl\": 2},\n {\"ttl\": \"3\"}\n]}", `line 4: hop 3: field "ttl": want a whole number, got text "3"`},
		{"{\"hops\": [{\"ttl\": 1,\n \"responders\": [{\"addr\": \"10.0.0.1\"}, {\"addr\": \"10.0.0.2\", \"rtt_ms\": {\"p50\": \"fast\"}}]}]}",
			`line 2: hop 1: responder 2: field "rtt_ms.p50": want a number, got text "fast"`},
		{`{"hops": [{"ttl": 1.5}]}`, `line 1: hop 1: field "ttl": want a whole number, got the number 1.5`},
		{`{"hops": [{"ttl": 1, "responders": {"a": 1}}]}`, `line 1: hop 1: field "responders": want a list [...], got an object`},
		{`{"hops": [{"ttl": 1, "flags": [true]}]}`, `line 1: hop 1: flag 1: want text (in quotes), got the value true`},
		{`{"hops": {"ttl": 1}}`, `line 1: field "hops": want a list [...], got an object`},
		{`{"target": 7}`, `line 1: field "target": want text (in quotes), got the number 7`},
		{"{\"report\": {\"hubs\": [{\"count\": 1}, {\"count\": 2},\n{\"count\": true}]}}", `line 2: hub 3: field "count": want a whole number, got the value true`},
		{`[1, 2]`, `line 1: want an object {...}, got a list`},
		{"{\"hops\": [\n{\"ttl\": 1}", `line 2: the JSON ends before its last value does (a file cut short?)`},
		{"{\"hops\": [\n{\"ttl\": 1},,]}", `line 2: not valid JSON: invalid character ','`},
	}
	for _, c := range cases {
		var d doc
		err := Describe([]byte(c.in), json.Unmarshal([]byte(c.in), &d))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\n got  %v\n want %s", c.in, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "Go struct") || strings.Contains(err.Error(), "jsonmsg.") {
			t.Errorf("%s: Go type in %q", c.in, err)
		}
		var je *Error
		if !errors.As(err, &je) {
			t.Errorf("%s: not an *Error", c.in)
		}
	}
}

func TestDescribeLeavesOtherErrorsAlone(t *testing.T) {
	other := errors.New(`"a" is not a number`)
	if got := Describe([]byte(`{}`), other); got != other {
		t.Errorf("got %v", got)
	}
}
