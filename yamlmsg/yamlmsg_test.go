package yamlmsg

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestHumanizeNamesYAMLShapesNotGoTypes(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		into any
		want string
	}{
		{"text where a number goes", "rtt: 60ms\n", &struct {
			RTT float64 `yaml:"rtt"`
		}{}, `line 1: want a number, got "60ms"`},
		{"number where a list goes", "items: 5\n", &struct {
			Items []string `yaml:"items"`
		}{}, "line 1: want a list, got 5"},
		{"mapping where a list goes", "items: {a: 1}\n", &struct {
			Items []*struct{ A int } `yaml:"items"`
		}{}, "line 1: want a list, got a mapping"},
		{"list where a mapping goes", "sla: [1, 2]\n", &struct {
			SLA struct{ X int } `yaml:"sla"`
		}{}, "line 1: want a mapping, got a list"},
		{"number where a list of anonymous structs goes", "items: 5\n", &struct {
			Items []struct {
				Name string `yaml:"name"`
			} `yaml:"items"`
		}{}, "line 1: want a list, got 5"},
		{"text where a whole number goes", "port: https\n", &struct {
			Port int `yaml:"port"`
		}{}, `line 1: want a whole number, got "https"`},
		{"text where a boolean goes", "x: maybe\n", &struct {
			X bool `yaml:"x"`
		}{}, `line 1: want true or false, got "maybe"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := yaml.Unmarshal([]byte(c.doc), c.into)
			if err == nil {
				t.Fatal("yaml accepted the document")
			}
			got := Humanize(err.Error())
			if !strings.Contains(got, c.want) {
				t.Errorf("Humanize(%q) = %q, want it to contain %q", err, got, c.want)
			}
			if strings.Contains(got, "float64") || strings.Contains(got, "[]") || strings.Contains(got, "struct") || strings.Contains(got, "yaml:\"") {
				t.Errorf("Humanize(%q) = %q still names a Go type", err, got)
			}
		})
	}
}

func TestHumanizeUnknownField(t *testing.T) {
	dec := yaml.NewDecoder(strings.NewReader("a: 1\nx: 2\n"))
	dec.KnownFields(true)
	var v struct {
		A int `yaml:"a"`
	}
	err := dec.Decode(&v)
	if err == nil {
		t.Fatal("unknown field accepted")
	}
	if got, want := Humanize(err.Error()), `line 2: unknown key "x"`; !strings.Contains(got, want) {
		t.Errorf("Humanize(%q) = %q, want %q", err, got, want)
	}
}

func TestHumanizeLeavesOtherMessagesAlone(t *testing.T) {
	const msg = "line 3: did not find expected node content"
	if got := Humanize(msg); got != msg {
		t.Errorf("Humanize(%q) = %q", msg, got)
	}
}

func TestFileErrorNamesFileAndLine(t *testing.T) {
	var v struct {
		Items []string `yaml:"items"`
		Port  int      `yaml:"port"`
	}
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"two type errors", "items: 5\nport: x\n", []string{"c.yaml:1: want a list, got 5", `c.yaml:2: want a whole number, got "x"`}},
		{"syntax error", "items: [\n", []string{"c.yaml:1: did not find expected node content"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := yaml.Unmarshal([]byte(c.doc), &v)
			if err == nil {
				t.Fatal("accepted")
			}
			got := FileError("c.yaml", err).Error()
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("FileError = %q, want it to contain %q", got, w)
				}
			}
			if strings.Contains(got, "yaml: ") || strings.Contains(got, "unmarshal") {
				t.Errorf("FileError = %q keeps yaml's own wording", got)
			}
		})
	}
}

// An unknown key of an anonymous struct made yaml.v3 print the struct's
// whole type after the key (issue 35).
func TestFileErrorNamesNoGoStruct(t *testing.T) {
	var doc struct {
		Targets []yaml.Node `yaml:"targets"`
	}
	dec := yaml.NewDecoder(strings.NewReader("targets: []\ntargetz: []\n"))
	dec.KnownFields(true)
	err := FileError("t.yaml", dec.Decode(&doc))
	if err == nil || err.Error() != `t.yaml:2: unknown key "targetz"` {
		t.Errorf("got %v, want t.yaml:2: unknown key \"targetz\"", err)
	}
}
