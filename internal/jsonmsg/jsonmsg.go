// Package jsonmsg words encoding/json's decoding errors, which name Go types
// and struct paths ("json: cannot unmarshal string into Go struct field
// Hop.hops.ttl of type int"), for the user of the file: the line, the
// element (hop 3, responder 1) and the field, what was expected and what
// was found ("line 14: hop 3: field "ttl": want a whole number, got text
// "3"").
package jsonmsg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/internal/tsv"
)

// Error is a decoding error in words; Unwrap gives encoding/json's.
type Error struct {
	Line int    // 1-based line of data where the problem is; 0: not said (Record)
	Msg  string // the problem, without the line
	err  error
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}
func (e *Error) Unwrap() error { return e.err }

// Describe words err, an error of json.Unmarshal (or a Decoder) over data:
// a syntax error or a value of the wrong type becomes an *Error, located
// by line (and for a wrong type by element and field); any other error
// (an UnmarshalJSON method's own message) comes back as it is.
func Describe(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		msg := "not valid JSON: " + se.Error()
		if se.Error() == "unexpected end of JSON input" {
			msg = "the JSON ends before its last value does (a file cut short?)"
		}
		return &Error{Line: lineAt(data, se.Offset), Msg: msg, err: err}
	case errors.As(err, &te):
		path, tok := locate(data, te.Offset)
		where := place(path)
		msg := fmt.Sprintf("want %s, got %s", want(te.Type), got(te.Value, tok))
		if where != "" {
			msg = where + ": " + msg
		}
		return &Error{Line: lineAt(data, te.Offset), Msg: msg, err: err}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Line: lineAt(data, int64(len(data))), Msg: "the JSON ends before its last value does (a file cut short?)", err: err}
	}
	return err
}

// Record is Describe for one record of an NDJSON stream, whose line the
// caller names: the message without a line of its own.
func Record(data []byte, err error) error {
	err = Describe(data, err)
	if e, ok := err.(*Error); ok {
		e.Line = 0
	}
	return err
}

// lineAt is the 1-based line of byte offset off of data.
func lineAt(data []byte, off int64) int {
	off = max(0, min(off, int64(len(data))))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// step is one element of a path: an object's key or an array's index.
type step struct {
	key string
	idx int // -1 for a key
}

type frame struct {
	array     bool
	idx       int
	key       string
	expectKey bool
}

// locate walks data's tokens up to offset off (where encoding/json stopped:
// after a wrong scalar, after the opening bracket of a wrong object or
// array) and returns the path of the value there and its token.
func locate(data []byte, off int64) ([]step, json.Token) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []frame
	for {
		t, err := dec.Token()
		if err != nil {
			return nil, nil
		}
		if d, ok := t.(json.Delim); ok && (d == '}' || d == ']') {
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			if !top.array && top.expectKey {
				top.key, _ = t.(string)
				top.expectKey = false
				continue
			}
			if top.array {
				top.idx++
			} else {
				top.expectKey = true
			}
		}
		path := make([]step, 0, len(stack))
		for _, f := range stack {
			if f.array {
				path = append(path, step{idx: f.idx})
			} else {
				path = append(path, step{key: f.key, idx: -1})
			}
		}
		if d, ok := t.(json.Delim); ok {
			stack = append(stack, frame{array: d == '[', idx: -1, expectKey: d == '{'})
		}
		if dec.InputOffset() >= off {
			return path, t
		}
	}
}

// place names a path in the file's words: every element of a list by its
// list's name in the singular and its 1-based position ("hops"[2] → "hop
// 3"), the keys after the last of them as the field ("field "rtt_ms.p50"").
func place(path []step) string {
	var parts, field []string
	for i, s := range path {
		if s.idx < 0 {
			field = append(field, s.key)
			continue
		}
		list := "item"
		if i > 0 && path[i-1].idx < 0 {
			list = singular(path[i-1].key)
		}
		// The keys before the list's element (the list's own key, named
		// above, and the objects around it) are not the field.
		parts = append(parts, fmt.Sprintf("%s %d", list, s.idx+1))
		field = nil
	}
	if len(field) > 0 {
		parts = append(parts, fmt.Sprintf("field %q", strings.Join(field, ".")))
	}
	return strings.Join(parts, ": ")
}

// singular is a list's key as the name of one element: "hops" → "hop";
// a key not ending in s names its elements "KEY item".
func singular(key string) string {
	if s, ok := strings.CutSuffix(key, "s"); ok && s != "" && !strings.HasSuffix(s, "s") {
		return s
	}
	return key + " item"
}

// want names what a Go type takes, in JSON's words.
func want(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "text (in quotes)"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list [...]"
	case reflect.Struct, reflect.Map:
		return "an object {...}"
	}
	return "another value"
}

// got names what was found: encoding/json's kind of value, with the token
// itself where it is a short scalar.
func got(kind string, tok json.Token) string {
	switch v := tok.(type) {
	case string:
		return "text " + tsv.Quote(v)
	case json.Number:
		return "the number " + v.String()
	case bool:
		return "the value " + strconv.FormatBool(v)
	}
	switch {
	case kind == "array":
		return "a list"
	case kind == "object":
		return "an object"
	case kind == "string":
		return "text"
	case strings.HasPrefix(kind, "number"):
		return "the " + kind
	}
	return kind
}
