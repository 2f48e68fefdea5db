package billing

import (
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

// UnmarshalYAML parses a YAML scalar ("12.50", 12.50, "1_000") as an exact decimal.
func (d *Dec) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a number, got a %s", n.Line, kindName(n.Kind))
	}
	s := strings.ReplaceAll(strings.TrimSpace(n.Value), "_", "")
	v, err := decimal.NewFromString(s)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a decimal number", n.Line, n.Value)
	}
	d.Decimal, d.Set = v, true
	return nil
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
