package yamlmsg

import (
	"bytes"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestOneDocumentRefusesASecondDocumentWithItsLine(t *testing.T) {
	cases := []struct {
		in   string
		want string // "" for accepted
	}{
		{"a: 1\n", ""},
		{"a: 1\n---\n", ""},      // an empty document after the first
		{"a: 1\n...\n", ""},      // the end marker alone
		{"a: 1\n---\n---\n", ""}, // two empty ones
		{"a: 1\n---\nb: 2\n", "f.yaml:3: a second YAML document"},
		{"a: 1\n---\n\n# note\nb: 2\n", "f.yaml:5: a second YAML document"},
		{"a: 1\n---\n---\n- x\n", "f.yaml:4: a second YAML document"},
		{"a: 1\n---\nb: [\n", "f.yaml:"}, // a broken second document is an error too
	}
	for _, c := range cases {
		dec := yaml.NewDecoder(bytes.NewReader([]byte(c.in)))
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%q: first document: %v", c.in, err)
		}
		err := OneDocument(dec, "f.yaml", "a candidates file")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v, want accepted", c.in, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%q: %v, want %q…", c.in, err, c.want)
		}
	}
}
