package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

// secondsDuration is a duration flag that takes what ping and traceroute
// take, a plain number of seconds ("0.2", "2"), as well as a Go duration
// ("200ms", "1m30s"). Its Type is "duration", so pflag's GetDuration reads
// it like a flag made by DurationVar.
type secondsDuration struct{ p *time.Duration }

func (d secondsDuration) String() string {
	if d.p == nil {
		return "0s"
	}
	return d.p.String()
}

func (d secondsDuration) Type() string { return "duration" }

func (d secondsDuration) Set(s string) error {
	v, err := parseSeconds(s)
	if err != nil {
		return err
	}
	*d.p = v
	return nil
}

// parseSeconds reads a plain number as seconds and anything else as a Go
// duration; the error shows both forms.
func parseSeconds(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(t, 64); err == nil && !strings.ContainsAny(t, "xXpP_") {
		if math.IsNaN(f) {
			return 0, fmt.Errorf("%q: not a duration: use seconds (0.2, 2) or a Go duration (200ms, 1m30s)", s)
		}
		if math.IsInf(f, 0) || math.Abs(f) > math.MaxInt64/1e9 {
			return 0, fmt.Errorf("%q: too long a duration: at most %d seconds (about 292 years)", s, int64(math.MaxInt64)/1e9)
		}
		return time.Duration(math.Round(f * 1e9)), nil
	}
	v, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q: not a duration: use seconds (0.2, 2) or a Go duration (200ms, 1m30s)", s)
	}
	return v, nil
}

// durationVarP defines a duration flag that also takes plain seconds (see
// secondsDuration). Every command's time flags use it, so that `-i 0.2`
// means the same everywhere.
func durationVarP(f *pflag.FlagSet, p *time.Duration, name, short string, def time.Duration, usage string) {
	*p = def
	f.VarP(secondsDuration{p}, name, short, usage)
}

// errInterrupted marks a run cut short by Ctrl-C (SIGINT) or SIGTERM: the
// partial report has been written; the process exits 130, as shells expect
// from a command ended by SIGINT.
var errInterrupted = &exitError{code: 130, err: errors.New("interrupted")}

// interruptContext returns a context that ends on SIGINT or SIGTERM, and
// interrupted, which tells whether that happened (as opposed to the parent
// ending). ping, trace and compare use it to print what they measured
// before exiting 130.
func interruptContext(parent context.Context) (ctx context.Context, interrupted func() bool, stop func()) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	got := make(chan struct{})
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			close(got)
			cancel()
		case <-done:
		}
	}()
	interrupted = func() bool {
		select {
		case <-got:
			return true
		default:
			return false
		}
	}
	var stopped bool
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		signal.Stop(ch)
		close(done)
		cancel()
	}
	return ctx, interrupted, stop
}

// valueSwitch is a boolean flag that sets a string flag to one value, as
// traceroute's protocol switches (-T, -U, -I) set the protocol and mtr's
// -j sets the format.
type valueSwitch struct {
	p     *string
	value string
	set   *bool
}

func (s valueSwitch) String() string   { return strconv.FormatBool(s.set != nil && *s.set) }
func (s valueSwitch) Type() string     { return "bool" }
func (s valueSwitch) IsBoolFlag() bool { return true }

func (s valueSwitch) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q: use true or false", v)
	}
	*s.set = b
	if b {
		*s.p = s.value
	}
	return nil
}

// switchVarP defines a switch flag that sets *p to value.
func switchVarP(f *pflag.FlagSet, p *string, name, short, value, usage string) {
	var set bool
	fl := f.VarPF(valueSwitch{p: p, value: value, set: &set}, name, short, usage)
	fl.NoOptDefVal = "true"
}

// aliasVarP defines flag name (with shorthand short) as a second spelling
// of the flag target: both set the same value. It serves the short flags
// two anchors spell differently (traceroute's -w and linecheck's -W).
func aliasVarP(f *pflag.FlagSet, target, name, short, usage string) {
	t := f.Lookup(target)
	fl := f.VarPF(t.Value, name, short, usage)
	fl.DefValue = t.DefValue
	fl.NoOptDefVal = t.NoOptDefVal
}

// flagValueError words pflag's error for a number or switch flag given
// something else, which names Go's parser ("strconv.ParseInt: parsing
// "abc": invalid syntax"), as what the flag wants: `-c, --count "abc": want
// a whole number`. Other errors come back as they are.
func flagValueError(err error) error {
	var ive *pflag.InvalidValueError
	var ne *strconv.NumError
	if !errors.As(err, &ive) || !errors.As(err, &ne) {
		return err
	}
	fl := ive.GetFlag()
	name := "--" + fl.Name
	if fl.Shorthand != "" {
		name = "-" + fl.Shorthand + ", " + name
	}
	var want string
	switch t := fl.Value.Type(); {
	case t == "bool":
		want = "true or false"
	case strings.HasPrefix(t, "float"):
		want = "a number such as " + exampleOr(fl.DefValue, "0.5")
	case strings.HasPrefix(t, "uint"):
		want = "a whole number, 0 or more, such as " + exampleOr(fl.DefValue, "10")
	default:
		want = "a whole number such as " + exampleOr(fl.DefValue, "10")
	}
	if errors.Is(ne.Err, strconv.ErrRange) {
		return fmt.Errorf("%s %q: out of range: want %s", name, ive.GetValue(), want)
	}
	return fmt.Errorf("%s %q: want %s", name, ive.GetValue(), want)
}

// exampleOr is a flag's default as an example, or fallback when the
// default says nothing (0, empty).
func exampleOr(def, fallback string) string {
	if def == "" || def == "0" || def == "[]" {
		return fallback
	}
	return def
}
