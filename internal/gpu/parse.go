package gpu

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseError is a malformed or partial input: the file, the line (0 when
// the whole file is at fault) and what is wrong.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

func perr(file string, line int, format string, a ...any) error {
	return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, a...)}
}

// absent reports a value nvidia-smi writes for "no figure".
func absent(s string) bool {
	s = strings.TrimSpace(s)
	switch strings.ToLower(strings.Trim(s, "[]")) {
	case "", "n/a", "not supported", "unknown error", "requested functionality has been deprecated", "insufficient permissions", "gpu is lost", "none":
		return true
	}
	return false
}

// number parses "81559 MiB", "700.00 W", "16x", "5" into a float; ok is
// false for an absent value, err set for text that is no number.
func number(s string) (v float64, ok bool, err error) {
	s = strings.TrimSpace(s)
	if absent(s) {
		return 0, false, nil
	}
	f := strings.Fields(s)
	num := strings.TrimSuffix(f[0], "x")
	v, err = strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%q is not a number", s)
	}
	return v, true, nil
}

func fptr(v float64) *float64 { return &v }
func iptr(v int) *int         { return &v }

// setNum parses s into *dst (left nil when absent).
func setNum(dst **float64, s string) error {
	v, ok, err := number(s)
	if err != nil || !ok {
		return err
	}
	*dst = fptr(v)
	return nil
}

func setInt(dst **int, s string) error {
	v, ok, err := number(s)
	if err != nil || !ok {
		return err
	}
	*dst = iptr(int(v))
	return nil
}

// mode normalises an ECC or MIG mode ("Enabled", "Disabled", "N/A").
func mode(s string) string {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "enabled", "enable", "on":
		return "Enabled"
	case "disabled", "disable", "off":
		return "Disabled"
	case "n/a", "[n/a]", "not supported", "[not supported]":
		return "N/A"
	}
	return s
}

// normBusID writes a PCI bus id the way the XML, the text and the CSV all
// can: lower case, domain of 8 digits (the topo matrix has no bus ids).
func normBusID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.Index(s, ":"); i >= 0 && i < 8 {
		s = strings.Repeat("0", 8-i) + s
	}
	return s
}
