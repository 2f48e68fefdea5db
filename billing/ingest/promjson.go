package ingest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A streaming decoder for Prometheus /api/v1/query_range answers, used for a
// saved file and for a live answer alike. encoding/json's Decoder costs four
// allocating Token calls per [time, "value"] pair and its Unmarshal needs the
// whole body in memory (plus a copy per value): a month of 1,000 series is
// 18 M pairs. Here every byte is read once from a bufio.Reader, lines are
// counted on the way (so an error names its line) and only the decoded
// points are kept.

// PromPoint is one [time, "value"] pair of a matrix result: T in unix seconds
// (rounded), V the value as written (NaN when the server wrote "NaN").
type PromPoint struct {
	T int64
	V float64
}

// PromResult is one label set of a query_range matrix and its points.
type PromResult struct {
	Labels map[string]string
	Points []PromPoint // in the order of the answer
	// Line is the line the result starts on in a saved file (1 for a live
	// answer, which is one line); Lines, when set, holds each point's line.
	Line  int64
	Lines []int64
	// Dir is "in" or "out" when the query says which direction it is
	// (bill --query-in / --query-out); "" lets a direction label decide.
	Dir string
}

// PromAnswer is what a query_range answer says besides its results.
type PromAnswer struct {
	Status, ErrorType, Error string
	ResultType               string
	Warnings                 []string
	StatusLine, TypeLine     int64
	Results                  int
}

// ErrTooLarge is wrapped by the error for an answer with more points than
// PromDecodeOptions.MaxPoints.
var ErrTooLarge = errors.New("answer too large")

// PromDecodeOptions bound and shape the decode.
type PromDecodeOptions struct {
	// MaxPoints bounds the points of the whole answer (0: no bound), so
	// that memory stays bounded whatever the server sends.
	MaxPoints int64
	// KeepLines records each point's line (saved files: order errors name it).
	KeepLines bool
}

// DecodePromMatrix reads a query_range answer from r and calls each for
// every result once its points are read. Bad input gives a *ReadError that
// names file:line and the field.
func DecodePromMatrix(r io.Reader, file string, opts PromDecodeOptions, each func(*PromResult) error) (PromAnswer, error) {
	s := &jscan{r: bufio.NewReaderSize(r, 256<<10), file: file, line: 1}
	var a PromAnswer
	a.StatusLine, a.TypeLine = 1, 1
	var points int64
	lastLen := 0
	err := s.object("", func(key string, line int64) error {
		switch key {
		case "status":
			a.StatusLine = line
			return s.stringInto(key, &a.Status)
		case "errorType":
			return s.stringInto(key, &a.ErrorType)
		case "error":
			return s.stringInto(key, &a.Error)
		case "warnings":
			return s.array(key, func(i int, _ int64) error {
				var w string
				if err := s.stringInto(fmt.Sprintf("warnings[%d]", i), &w); err != nil {
					return err
				}
				a.Warnings = append(a.Warnings, w)
				return nil
			})
		case "data":
			return s.object(key, func(k string, line int64) error {
				switch k {
				case "resultType":
					a.TypeLine = line
					return s.stringInto(k, &a.ResultType)
				case "result":
					return s.array(k, func(i int, line int64) error {
						// Results of one answer have as many points as each other, mostly.
						res := &PromResult{Line: line, Labels: map[string]string{}, Points: make([]PromPoint, 0, lastLen)}
						field := fmt.Sprintf("result[%d]", i)
						err := s.object(field, func(k string, line int64) error {
							switch k {
							case "metric":
								return s.object(field+".metric", func(name string, _ int64) error {
									var v string
									if err := s.stringInto(field+".metric."+name, &v); err != nil {
										return err
									}
									res.Labels[name] = v
									return nil
								})
							case "value":
								return s.errf(line, field+".value", "an instant query result (vector): save a query_range response (a matrix)")
							case "values":
								return s.array(field+".values", func(j int, line int64) error {
									if opts.MaxPoints > 0 && points >= opts.MaxPoints {
										return &ReadError{File: file, Line: int(line), Field: field + ".values",
											Msg: fmt.Sprintf("more than %d points in the answer: narrow the query or the period, or raise the limit", opts.MaxPoints), Err: ErrTooLarge}
									}
									p, ok := s.fastPair()
									var err error
									if !ok {
										p, err = s.pair("", line)
									}
									if err != nil {
										// Named only now: formatting a name per point cost more than the parse.
										var re *ReadError
										if errors.As(err, &re) && re.Field == "" {
											re.Field = fmt.Sprintf("%s.values[%d]", field, j)
										}
										return err
									}
									points++
									res.Points = append(res.Points, p)
									if opts.KeepLines {
										res.Lines = append(res.Lines, line)
									}
									return nil
								})
							}
							return s.skip(field + "." + k)
						})
						if err != nil {
							return err
						}
						a.Results++
						lastLen = len(res.Points)
						return each(res)
					})
				}
				return s.skip(k)
			})
		}
		return s.skip(key)
	})
	if err != nil {
		return a, err
	}
	if c, err := s.peek(); err == nil {
		return a, s.errf(s.line, "", "unexpected %q after the JSON document", c)
	}
	return a, nil
}

// jscan is a minimal streaming JSON scanner that counts lines.
type jscan struct {
	r    *bufio.Reader
	file string
	line int64
	buf  []byte
}

func (s *jscan) errf(line int64, field, format string, args ...any) *ReadError {
	return errAt(s.file, line, field, format, args...)
}

// eof turns the end of input into a ReadError.
func (s *jscan) eof(err error, field string) error {
	if err == io.EOF {
		return &ReadError{File: s.file, Line: int(s.line), Field: field, Msg: "unexpected end of JSON", Err: io.ErrUnexpectedEOF}
	}
	var re *ReadError
	if errors.As(err, &re) {
		return err
	}
	return &ReadError{File: s.file, Line: int(s.line), Field: field, Msg: "reading: " + err.Error(), Err: err}
}

// peek returns the next byte that is not white space, without consuming it.
func (s *jscan) peek() (byte, error) {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case '\n':
			s.line++
			continue
		case ' ', '\t', '\r':
			continue
		}
		s.r.UnreadByte()
		return c, nil
	}
}

// want consumes the byte c (after white space).
func (s *jscan) want(c byte, field, what string) error {
	got, err := s.peek()
	if err != nil {
		return s.eof(err, field)
	}
	if got != c {
		return s.errf(s.line, field, "want %s, got %q", what, got)
	}
	s.r.ReadByte()
	return nil
}

// open consumes the opening byte of an object or array and, when the
// container is empty, its closing byte too; empty says it was.
func (s *jscan) open(open, close byte, field, what string) (empty bool, err error) {
	if err := s.want(open, field, what); err != nil {
		return false, err
	}
	c, err := s.peek()
	if err != nil {
		return false, s.eof(err, field)
	}
	if c != close {
		return false, nil
	}
	s.r.ReadByte()
	return true, nil
}

// object calls fn for each key of the object that comes next; fn consumes
// the value.
func (s *jscan) object(field string, fn func(key string, line int64) error) error {
	if empty, err := s.open('{', '}', field, "an object"); empty || err != nil {
		return err
	}
	for {
		line := s.line
		key, err := s.str(field)
		if err != nil {
			return err
		}
		if err := s.want(':', field, "':' after a key"); err != nil {
			return err
		}
		if err := fn(key, line); err != nil {
			return err
		}
		c, err := s.peek()
		if err != nil {
			return s.eof(err, field)
		}
		s.r.ReadByte()
		switch c {
		case ',':
			continue
		case '}':
			return nil
		}
		return s.errf(s.line, field, "want ',' or '}' in an object, got %q", c)
	}
}

// array calls fn for each element of the array that comes next. Its comma
// and close handling is object's, written again on purpose: as a shared
// function it is a call per element, and the values array of a
// query_range answer has one element per point (24 more instructions a
// point, +1.4 % on BenchmarkPromMatrix, measured with cachegrind). The
// opening, once a container, is shared (open).
func (s *jscan) array(field string, fn func(i int, line int64) error) error {
	if empty, err := s.open('[', ']', field, "an array"); empty || err != nil {
		return err
	}
	for i := 0; ; i++ {
		if _, err := s.peek(); err != nil {
			return s.eof(err, field)
		}
		if err := fn(i, s.line); err != nil {
			return err
		}
		c, err := s.peek()
		if err != nil {
			return s.eof(err, field)
		}
		s.r.ReadByte()
		switch c {
		case ',':
			continue
		case ']':
			return nil
		}
		return s.errf(s.line, field, "want ',' or ']' in an array, got %q", c)
	}
}

// str reads a JSON string.
func (s *jscan) str(field string) (string, error) {
	b, err := s.strBytes(field)
	return string(b), err
}

// strBytes reads a JSON string into a buffer reused by the next call.
func (s *jscan) strBytes(field string) ([]byte, error) {
	if err := s.want('"', field, "a string"); err != nil {
		return nil, err
	}
	s.buf = s.buf[:0]
	escaped := false
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return nil, s.eof(err, field)
		}
		switch {
		case c == '"':
			if !escaped {
				if !utf8.Valid(s.buf) {
					return nil, s.errf(s.line, field, "string is not valid UTF-8")
				}
				return s.buf, nil
			}
			u, err := strconv.Unquote(`"` + string(s.buf) + `"`)
			if err != nil {
				return nil, s.errf(s.line, field, "invalid string escape in %s", quoteShort(s.buf))
			}
			s.buf = append(s.buf[:0], u...)
			return s.buf, nil
		case c == '\\':
			escaped = true
			s.buf = append(s.buf, c)
			n, err := s.r.ReadByte()
			if err != nil {
				return nil, s.eof(err, field)
			}
			s.buf = append(s.buf, n)
		case c < 0x20:
			return nil, s.errf(s.line, field, "control character in a string")
		default:
			s.buf = append(s.buf, c)
		}
	}
}

func (s *jscan) stringInto(field string, dst *string) error {
	v, err := s.str(field)
	*dst = v
	return err
}

// scalar reads a number, true, false or null as its bytes.
func (s *jscan) scalar(field string) ([]byte, error) {
	if _, err := s.peek(); err != nil {
		return nil, s.eof(err, field)
	}
	s.buf = s.buf[:0]
	for {
		c, err := s.r.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, s.eof(err, field)
		}
		if c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\t' || c == '\r' {
			s.r.UnreadByte()
			break
		}
		s.buf = append(s.buf, c)
		if len(s.buf) > 64 {
			return nil, s.errf(s.line, field, "value %s is too long", quoteShort(s.buf))
		}
	}
	if len(s.buf) == 0 {
		c, _ := s.peek()
		return nil, s.errf(s.line, field, "want a value, got %q", c)
	}
	return s.buf, nil
}

// skip consumes the next value, whatever it is.
func (s *jscan) skip(field string) error {
	c, err := s.peek()
	if err != nil {
		return s.eof(err, field)
	}
	switch c {
	case '{':
		return s.object(field, func(k string, _ int64) error { return s.skip(field + "." + k) })
	case '[':
		return s.array(field, func(i int, _ int64) error { return s.skip(field) })
	case '"':
		_, err := s.strBytes(field)
		return err
	}
	b, err := s.scalar(field)
	if err != nil {
		return err
	}
	switch v := string(b); v {
	case "true", "false", "null":
		return nil
	default:
		if _, err := strconv.ParseFloat(v, 64); err != nil && !isRange(err) {
			return s.errf(s.line, field, "invalid JSON value %s", quoteShort(b))
		}
	}
	return nil
}

// fastPair reads one [time,"value"] element written as Prometheus writes
// it, without white space, straight from the reader's buffer; ok is false
// (nothing consumed) for anything else, which pair then reads byte by byte
// and judges.
func (s *jscan) fastPair() (PromPoint, bool) {
	var p PromPoint
	b, _ := s.r.Peek(80)
	if len(b) < 6 || b[0] != '[' {
		return p, false
	}
	i := 1
	for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == '.') {
		i++
	}
	t, ok := unixSeconds(b[1:i])
	if !ok || i+2 >= len(b) || b[i] != ',' || b[i+1] != '"' {
		return p, false
	}
	j := i + 2
	for j < len(b) && b[j] != '"' && b[j] != '\\' {
		j++
	}
	if j+1 >= len(b) || b[j] != '"' || b[j+1] != ']' {
		return p, false
	}
	v, msg := promValue(b[i+2 : j])
	if msg != "" {
		return p, false // the slow path names the error
	}
	p.T, p.V = t, v
	s.r.Discard(j + 2)
	return p, true
}

// pair reads one [time, "value"] element.
func (s *jscan) pair(field string, line int64) (PromPoint, error) {
	var p PromPoint
	if err := s.want('[', field, `[time, "value"]`); err != nil {
		return p, err
	}
	tb, err := s.scalar(field)
	if err != nil {
		if c, _ := s.peek(); c == ']' {
			return p, s.errf(line, field, "want [time, \"value\"], got 0 elements")
		}
		return p, err
	}
	if t, ok := unixSeconds(tb); ok {
		p.T = t
	} else {
		t, err := strconv.ParseFloat(string(tb), 64)
		if err != nil || t < 0 || t > 1e11 {
			return p, s.errf(line, field, "time %s is not a unix time", tb)
		}
		p.T = int64(math.Round(t))
	}
	c, err := s.peek()
	if err != nil {
		return p, s.eof(err, field)
	}
	if c == ']' {
		return p, s.errf(line, field, "want [time, \"value\"], got 1 elements")
	}
	if err := s.want(',', field, "','"); err != nil {
		return p, err
	}
	var vb []byte
	if c, _ := s.peek(); c == '"' {
		vb, err = s.strBytes(field)
	} else {
		vb, err = s.scalar(field) // a bare number: not what Prometheus writes, but unambiguous
	}
	if err != nil {
		return p, err
	}
	v, msg := promValue(vb)
	if msg != "" {
		return p, s.errf(line, field, "value %s", msg)
	}
	p.V = v
	n := 2
	for {
		c, err := s.peek()
		if err != nil {
			return p, s.eof(err, field)
		}
		if c == ']' {
			s.r.ReadByte()
			break
		}
		if err := s.want(',', field, "','"); err != nil {
			return p, err
		}
		if err := s.skip(field); err != nil {
			return p, err
		}
		n++
	}
	if n != 2 {
		return p, s.errf(line, field, "want [time, \"value\"], got %d elements", n)
	}
	return p, nil
}

// unixSeconds parses the usual time of a matrix point, whole seconds with an
// optional fraction ("1782864300", "1782864300.5"), rounded; ok is false
// for anything else, which strconv then judges.
func unixSeconds(b []byte) (int64, bool) {
	var t int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		t = t*10 + int64(b[i]-'0')
	}
	if i == 0 || i > 11 {
		return 0, false
	}
	if i == len(b) {
		return t, true
	}
	if b[i] != '.' || i+1 == len(b) {
		return 0, false
	}
	for _, c := range b[i+1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	if b[i+1] >= '5' {
		t++ // round half up, as math.Round does for positive times
	}
	return t, true
}

// promValue parses a sample value: a float as Prometheus formats it. NaN is
// kept (a gap); infinities, negatives and rates no link can carry are
// refused: a bill built on them would be nonsense.
func promValue(b []byte) (float64, string) {
	if len(b) > 0 && (b[0] < '0' || b[0] > '9') { // the rare spellings, checked only when they may be one
		switch strings.ToLower(string(b)) {
		case "nan":
			return math.NaN(), ""
		case "+inf", "inf", "-inf":
			return 0, strconv.Quote(string(b)) + " is not a finite number"
		}
	}
	v, err := strconv.ParseFloat(string(b), 64)
	switch {
	case err != nil && !isRange(err):
		return 0, quoteShort(b) + " is not a number"
	case err != nil || math.IsInf(v, 0):
		return 0, quoteShort(b) + " is not a finite number"
	case v < 0:
		return 0, quoteShort(b) + " is negative"
	case v > impossibleBps:
		return 0, fmt.Sprintf("%s bit/s is beyond any link (over %.0e bit/s): check the query (is it bit/s, from rate()*8?)", quoteShort(b), impossibleBps)
	}
	return v, ""
}
