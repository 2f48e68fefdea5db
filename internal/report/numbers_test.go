package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func TestMSAdaptivePrecision(t *testing.T) {
	for v, want := range map[float64]string{
		0.0213: "0.0213", 0.00481: "0.00481", 0.5: "0.500", 1.23456: "1.235", 12.345: "12.35", 123.45: "123.5", 0: "0.000",
		0.0000004: "0.000000",
	} {
		if got := MS(v); got != want {
			t.Errorf("MS(%v) = %q, want %q", v, got, want)
		}
	}
	if got := Pct(0.025); got != "2.5%" {
		t.Errorf("Pct = %q", got)
	}
}

func TestMoneyGroupsThousandsToTheMinorUnit(t *testing.T) {
	cases := []struct {
		v     string
		minor int32
		want  string
	}{
		{"144691.54", 2, "144,691.54"}, {"16000", 2, "16,000.00"}, {"17558.4", 2, "17,558.40"}, {"16000", 0, "16,000"},
		{"-1234.005", 2, "-1,234.01"}, {"999", 2, "999.00"}, {"1234567.8915", 3, "1,234,567.892"},
	}
	for _, c := range cases {
		if got := Money(decimal.RequireFromString(c.v), c.minor); got != c.want {
			t.Errorf("Money(%s, %d) = %q, want %q", c.v, c.minor, got, c.want)
		}
	}
	if got := GroupThousands("n/a"); got != "n/a" {
		t.Errorf("GroupThousands changed a non-number: %q", got)
	}
	if got := Mbit(1234.5e6); got != "1,234.5 Mbit/s" {
		t.Errorf("Mbit = %q", got)
	}
}

func TestJSONWithoutFloatNoise(t *testing.T) {
	var b bytes.Buffer
	v := map[string]any{"a": 0.0020152499999999997, "b": 0.1 + 0.2, "c": 3, "d": "0.30000000000000004", "e": 1e-9, "f": -2.5}
	if err := WriteJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": 0.00201525,\n  \"b\": 0.3,\n  \"c\": 3,\n  \"d\": \"0.30000000000000004\",\n  \"e\": 1e-9,\n  \"f\": -2.5\n}\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if got := Float(0.1 + 0.2); got != "0.3" {
		t.Errorf("Float = %q", got)
	}
}

// A table wider than the limit keeps every line within it: the title and
// notes wrap, columns move to a detail block, and East Asian names count two
// columns each.
func TestFittedTableKeepsEveryLineWithinTheWidth(t *testing.T) {
	tb := Table{Title: strings.Repeat("title word ", 12), Headers: []string{"name", "a long column", "b", "c column", "d"},
		Align: "lrrrr", Movable: []string{"c column"},
		Rows:  [][]string{{"香港 hk", "1.000", "2", "3.000000", "4"}, {"la", "10.5", "20", "30", "40"}},
		Notes: []string{strings.Repeat("a note that goes on ", 8)}}
	var b bytes.Buffer
	if err := WriteWith(&b, "table", Options{Width: 34}, tb); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if Width(l) > 34 {
			t.Errorf("line of %d columns: %q", Width(l), l)
		}
	}
	out := b.String()
	if !strings.Contains(out, "香港 hk: c column 3.000000") || !strings.Contains(out, "details (c column") {
		t.Errorf("no detail block for the moved column:\n%s", out)
	}
	// The grid aligns by display width: "香港 hk" is 7 columns, as "la" + 5 spaces.
	lines := strings.Split(out, "\n")
	var hk, la string
	for _, l := range lines {
		if strings.HasPrefix(l, "香港") {
			hk = l
		}
		if strings.HasPrefix(l, "la ") {
			la = l
		}
	}
	if Width(hk) != Width(la) {
		t.Errorf("rows of different widths:\n%s\n%s", hk, la)
	}
	b.Reset()
	WriteWith(&b, "table", Options{Width: 40, Wide: true}, tb)
	if strings.Contains(b.String(), "details") || !strings.Contains(b.String(), "c column") {
		t.Errorf("--wide:\n%s", b.String())
	}
}
