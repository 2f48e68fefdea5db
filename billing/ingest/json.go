package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// jsonDoc walks a JSON document token by token so that every error can name
// the line it is on (encoding/json reports byte offsets only).
type jsonDoc struct {
	file   string
	data   []byte
	dec    *json.Decoder
	lcOff  int
	lcLine int64
}

// maxJSONBytes bounds a vnstat or rrdtool JSON export, which is decoded
// whole: a year of 5-minute entries for a hundred interfaces is under it,
// and an endless stream stops there instead of filling memory.
var maxJSONBytes = 1 << 30 // a var: tests lower it

func newJSONDoc(r io.Reader, file string) (*jsonDoc, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(maxJSONBytes)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxJSONBytes {
		return nil, &ReadError{File: file, Line: 1, Msg: fmt.Sprintf("a JSON export larger than %d MiB: export a shorter range (vnstat --json --begin/--end, rrdtool xport --start/--end)", maxJSONBytes>>20), Err: ErrTooLarge}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &ReadError{File: file, Line: 1, Msg: "the input is empty: no traffic data to bill", Err: ErrEmpty}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return &jsonDoc{file: file, data: data, dec: dec, lcLine: 1}, nil
}

// lineAt is the line holding byte off.
func (d *jsonDoc) lineAt(off int) int64 {
	off = min(max(off, 0), len(d.data))
	if off < d.lcOff {
		d.lcOff, d.lcLine = 0, 1
	}
	d.lcLine += int64(bytes.Count(d.data[d.lcOff:off], []byte{'\n'}))
	d.lcOff = off
	return d.lcLine
}

// next is the line of the next token.
func (d *jsonDoc) next() int64 {
	off := int(d.dec.InputOffset())
	for off < len(d.data) {
		switch d.data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return d.lineAt(off)
}

func (d *jsonDoc) errf(line int64, field, format string, args ...any) *ReadError {
	return errAt(d.file, line, field, format, args...)
}

// wrap turns a decoder error into a ReadError on the right line.
func (d *jsonDoc) wrap(err error, field string) error {
	var re *ReadError
	if errors.As(err, &re) {
		return err
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &ReadError{File: d.file, Line: int(d.lineAt(int(se.Offset) - 1)), Field: field, Msg: "invalid JSON: " + se.Error(), Err: err}
	case errors.As(err, &te):
		return &ReadError{File: d.file, Line: int(d.lineAt(int(te.Offset) - 1)), Field: field, Msg: fmt.Sprintf("want %s, got JSON %s", te.Type, te.Value), Err: err}
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return &ReadError{File: d.file, Line: int(d.lineAt(len(d.data))), Field: field, Msg: "unexpected end of JSON", Err: err}
	}
	return &ReadError{File: d.file, Line: int(d.next()), Field: field, Msg: err.Error(), Err: err}
}

func (d *jsonDoc) delim(want json.Delim, field string) error {
	line := d.next()
	tok, err := d.dec.Token()
	if err != nil {
		return d.wrap(err, field)
	}
	if got, ok := tok.(json.Delim); !ok || got != want {
		what := map[json.Delim]string{'{': "an object", '[': "an array"}[want]
		return d.errf(line, field, "want %s, got %v", what, tok)
	}
	return nil
}

// object calls fn for each key of the object that comes next; fn must
// consume the value.
func (d *jsonDoc) object(field string, fn func(key string, line int64) error) error {
	if err := d.delim('{', field); err != nil {
		return err
	}
	for d.dec.More() {
		line := d.next()
		tok, err := d.dec.Token()
		if err != nil {
			return d.wrap(err, field)
		}
		key, _ := tok.(string)
		if err := fn(key, line); err != nil {
			return err
		}
	}
	_, err := d.dec.Token()
	if err != nil {
		return d.wrap(err, field)
	}
	return nil
}

// array calls fn for each element of the array that comes next; fn must
// consume the element.
func (d *jsonDoc) array(field string, fn func(i int, line int64) error) error {
	if err := d.delim('[', field); err != nil {
		return err
	}
	for i := 0; d.dec.More(); i++ {
		if err := fn(i, d.next()); err != nil {
			return err
		}
	}
	_, err := d.dec.Token()
	if err != nil {
		return d.wrap(err, field)
	}
	return nil
}

// decode decodes the next value into v.
func (d *jsonDoc) decode(field string, v any) error {
	line := d.next()
	if err := d.dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		if errors.As(err, &se) || errors.As(err, &te) || err == io.EOF || err == io.ErrUnexpectedEOF {
			return d.wrap(err, field)
		}
		msg := strings.TrimPrefix(err.Error(), "json: ")
		// json.Number's own message names Go's types: say what the file holds instead.
		if v, ok := strings.CutPrefix(msg, "invalid number literal, trying to unmarshal "); ok {
			v, _, _ = strings.Cut(v, " into ")
			if u, uerr := strconv.Unquote(v); uerr == nil {
				v = u
			}
			msg = "want a number, got " + v
		}
		return &ReadError{File: d.file, Line: int(line), Field: field, Msg: msg, Err: err}
	}
	return nil
}

// skip consumes the next value.
func (d *jsonDoc) skip(field string) error {
	var raw json.RawMessage
	return d.decode(field, &raw)
}

// jsonNumber parses a JSON scalar that must be a non-negative finite number
// (a number, or a numeric string as Prometheus writes them); null, "NaN" and
// the other unknown spellings are gaps.
func jsonNumber(v any) (float64, bool, string) {
	switch x := v.(type) {
	case nil:
		return 0, true, ""
	case json.Number:
		return parseValue([]byte(x))
	case string:
		return parseValue([]byte(x))
	}
	return 0, false, fmt.Sprintf("%v is not a number", v)
}
