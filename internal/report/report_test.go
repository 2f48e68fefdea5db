package report

import (
	"bytes"
	"testing"
)

func TestTableFormats(t *testing.T) {
	tb := Table{Headers: []string{"name", "mbps"}, Align: "lr", Rows: [][]string{{"a", "1.5"}, {"bb|x", "10"}}}
	cases := map[string]string{
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
