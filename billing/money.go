package billing

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
	"go.yaml.in/yaml/v3"
)

// Dec is an exact decimal read from YAML: the scalar's text is parsed as
// written ("0.35" stays 0.35; a YAML float never passes through float64).
type Dec struct {
	decimal.Decimal
	Set bool // the key was present in the file
}

// UnmarshalYAML parses a YAML scalar ("12.50", 12.50, "1_000") as an exact
// decimal from its text as written: an unquoted 19.50 is the node's literal
// "19.50", never a float64. A number beyond the bounds of ParseAmount is an
// *AmountError with the node's position (ParseOffers names the key).
func (d *Dec) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a number, got a %s", n.Line, kindName(n.Kind))
	}
	v, err := ParseAmount(n.Value)
	if err != nil {
		var ae *AmountError
		if errors.As(err, &ae) {
			ae.Line, ae.Column = n.Line, n.Column
			return ae
		}
		return fmt.Errorf("line %d: %q is not a decimal number", n.Line, n.Value)
	}
	d.Decimal, d.Set = v, true
	return nil
}

// Bounds of an amount read from a file: every price, quantity and rate of
// an offer is below 10^15 in magnitude (a quadrillion: far above any monthly
// bill, far below where "1e400" would print 400 digits) and has at most 12
// decimal places (beyond them no price, share or rate means anything).
const (
	MaxAmountDigits = 15
	MaxAmountPlaces = 12
)

var maxAmount = decimal.New(1, MaxAmountDigits)

// AmountError is a number outside the bounds of ParseAmount; Line and Column
// (1-based) are set when it was read from YAML.
type AmountError struct {
	Text         string
	Line, Column int
	tooPrecise   bool
}

func (e *AmountError) Error() string {
	t := e.Text
	if len(t) > 40 {
		t = t[:40] + "…"
	}
	if e.tooPrecise {
		return fmt.Sprintf("%q has more than %d decimal places: round it to the precision the provider states", t, MaxAmountPlaces)
	}
	return fmt.Sprintf("%q is beyond the bound of 10^%d: state the amount in the currency's units (a price, quantity or rate below 1,000,000,000,000,000)", t, MaxAmountDigits)
}

// ParseAmount reads a decimal number exactly as written ("19.50",
// "1_000", "2.5e3"), refusing magnitudes of 10^15 and more and more than 12
// decimal places with an *AmountError.
func ParseAmount(text string) (decimal.Decimal, error) {
	s := strings.ReplaceAll(strings.TrimSpace(text), "_", "")
	v, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, err
	}
	// The exponent is bounded first: comparing "1e999999999" with the bound
	// would build its billion digits.
	if e := v.Exponent(); !v.IsZero() && (e > MaxAmountDigits || e < -MaxAmountPlaces-64) {
		return decimal.Decimal{}, &AmountError{Text: text, tooPrecise: e < 0}
	}
	if v.Abs().GreaterThanOrEqual(maxAmount) {
		return decimal.Decimal{}, &AmountError{Text: text}
	}
	if v.Exponent() < -MaxAmountPlaces && !v.Equal(v.Round(MaxAmountPlaces)) {
		return decimal.Decimal{}, &AmountError{Text: text, tooPrecise: true}
	}
	return v, nil
}

// MarshalYAML writes the decimal as a string.
func (d Dec) MarshalYAML() (any, error) { return d.String(), nil }

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}

// minorUnits are the digits after the decimal point of currencies whose minor
// unit is not 2 (ISO 4217).
var minorUnits = map[string]int32{"JPY": 0, "KRW": 0, "VND": 0, "CLP": 0, "ISK": 0, "BHD": 3, "KWD": 3, "OMR": 3, "JOD": 3, "TND": 3}

// MinorUnit returns the number of decimal places of currency (2 unless listed in ISO 4217 otherwise).
func MinorUnit(currency string) int32 {
	if d, ok := minorUnits[strings.ToUpper(currency)]; ok {
		return d
	}
	return 2
}

// RoundMoney rounds an exact amount once, half away from zero, to the currency's minor unit.
func RoundMoney(v decimal.Decimal, currency string) decimal.Decimal {
	return v.Round(MinorUnit(currency))
}

// FormatMoney renders an amount rounded to the currency's minor unit with all its digits ("1234.50").
func FormatMoney(v decimal.Decimal, currency string) string {
	return RoundMoney(v, currency).StringFixed(MinorUnit(currency))
}

// exact renders an unrounded intermediate amount with all its digits (the
// JSON and CSV carry it whole; tables shorten it for reading).
func exact(v decimal.Decimal) string { return v.String() }

// readable renders an intermediate amount in a sentence, to 6 decimals.
func readable(v decimal.Decimal) string { return v.Round(6).String() }

// gbOf converts bytes to GB of base^3 bytes exactly: 1000^3 by a decimal shift,
// 1024^3 = 2^30 via bytes·5^30/10^30, which terminates.
func gbOf(bytes decimal.Decimal, base int) decimal.Decimal {
	if base == 1024 {
		return bytes.Mul(pow5_30).Shift(-30)
	}
	return bytes.Shift(-9)
}

var pow5_30 = decimal.New(5, 0).Pow(decimal.New(30, 0))

// mbpsOfBps converts a float rate in bit/s to an exact decimal in Mbps, from
// the float rounded to the report's 12 significant digits (Sig), so that
// the billable Mbps and the rule's value_bps say the same number.
func mbpsOfBps(bps float64) decimal.Decimal {
	return decimal.NewFromFloat(Sig(bps)).Shift(-6)
}

// GroupThousands puts a comma between every three digits of the integer
// part of a plain decimal string: "87649.50" → "87,649.50", "-1234" →
// "-1,234". Anything that is not a plain number is returned as it is.
func GroupThousands(s string) string {
	sign := ""
	body := s
	if strings.HasPrefix(body, "-") || strings.HasPrefix(body, "+") {
		sign, body = body[:1], body[1:]
	}
	intPart, frac, hasFrac := strings.Cut(body, ".")
	if intPart == "" {
		return s
	}
	for _, c := range intPart {
		if c < '0' || c > '9' {
			return s
		}
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return b.String()
}
