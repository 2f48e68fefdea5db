package tsv

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestEachSkipsCommentsAndBlankLinesAndLocatesErrors(t *testing.T) {
	text := "# a comment\r\na\tb\r\n\n   \nc\t\td\n# end"
	var got [][]string
	if err := Each("t.tsv", text, func(f []string) error { got = append(got, f); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"a", "b"}, {"c", "", "d"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
	bad := errors.New("column \"x\": no")
	err := Each("t.tsv", text, func(f []string) error {
		if f[0] == "c" {
			return bad
		}
		return nil
	})
	if err == nil || err.Error() != `t.tsv:5: column "x": no` || !errors.Is(err, bad) {
		t.Errorf("error %v, want it at line 5, wrapping fn's", err)
	}
}

func TestQuoteCutsLongTextAndHidesBinary(t *testing.T) {
	if got := Quote("short"); got != `"short"` {
		t.Errorf("Quote(short) = %s", got)
	}
	long := strings.Repeat("x", 100)
	if got := Quote(long); got != `"`+strings.Repeat("x", 40)+`"…` {
		t.Errorf("Quote(100 x) = %s", got)
	}
	if got := Quote("\x1f\x8b\x08\x00bin"); got != "(7 bytes of binary data, not text)" {
		t.Errorf("Quote(gzip head) = %s", got)
	}
	if got := Quote("a\xffb"); got != "(3 bytes of binary data, not text)" {
		t.Errorf("Quote(invalid UTF-8) = %s", got)
	}
}
