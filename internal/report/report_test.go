package report

import (
	"bytes"
	"testing"
)

func TestTableFormats(t *testing.T) {
	tb := Table{Headers: []string{"name", "mbps"}, Align: "lr", Rows: [][]string{{"a", "1.5"}, {"bb|x", "10"}}}
	cases := map[Format]string{
		"table":    "name  mbps\na      1.5\nbb|x    10\n",
		"csv":      "name,mbps\na,1.5\nbb|x,10\n",
		"markdown": "| name | mbps |\n|---|---:|\n| a | 1.5 |\n| bb\\|x | 10 |\n",
	}
	for f, want := range cases {
		var b bytes.Buffer
		if err := Write(&b, f, tb); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("%s:\n%q\nwant\n%q", f, b.String(), want)
		}
	}
	if err := CheckFormat("xml"); err == nil {
		t.Error("xml accepted")
	}
}

// Columns align by display width: a CJK name takes two columns per
// character, so the next column starts at the same screen column on every row.
func TestTableAlignsByDisplayWidth(t *testing.T) {
	tb := Table{Headers: []string{"name", "rtt"}, Align: "lr", Rows: [][]string{{"香港-cn2", "31.0"}, {"tokyo", "48.2"}, {"é-combining\u0301", "1.0"}}}
	var b bytes.Buffer
	if err := Write(&b, "table", tb); err != nil {
		t.Fatal(err)
	}
	// The first column is 11 screen columns wide (é-combininǵ; 香港-cn2 is 8).
	want := "name          rtt\n" +
		"香港-cn2     31.0\n" +
		"tokyo        48.2\n" +
		"é-combining\u0301   1.0\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
