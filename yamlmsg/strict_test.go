package yamlmsg

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestDecodeStrictRefusesUnknownKeysWithTheirLine(t *testing.T) {
	type target struct {
		Protocol string `yaml:"protocol"`
		Port     int    `yaml:"port,omitempty"`
		Skip     string `yaml:"-"`
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte("port: 443\nprotocl: tcp\n"), &root); err != nil {
		t.Fatal(err)
	}
	var v target
	err := DecodeStrict(root.Content[0], &v)
	want := `line 2: unknown key "protocl" (known: protocol, port)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	if err := yaml.Unmarshal([]byte("protocol: tcp\nport: 443\n"), &root); err != nil {
		t.Fatal(err)
	}
	if err := DecodeStrict(root.Content[0], &v); err != nil || v.Protocol != "tcp" || v.Port != 443 {
		t.Fatalf("known keys: %v %+v", err, v)
	}
}

// lined keeps the line of its block, as the candidates and offers types do.
type lined struct {
	Addr string `yaml:"addr"`
	Port int    `yaml:"port"`
	line int
}

func (l *lined) UnmarshalYAML(n *yaml.Node) error {
	type plain lined
	return DecodeLined(n, (*plain)(l), &l.line)
}

func TestDecodeLinedKeepsTheBlocksLineAndRefusesUnknownKeys(t *testing.T) {
	var doc struct {
		Targets []lined `yaml:"targets"`
	}
	src := "targets:\n  - addr: 127.0.0.1\n    port: 80\n\n  - addr: 127.0.0.2\n"
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	want := []lined{{Addr: "127.0.0.1", Port: 80, line: 2}, {Addr: "127.0.0.2", line: 5}}
	if len(doc.Targets) != 2 || doc.Targets[0] != want[0] || doc.Targets[1] != want[1] {
		t.Fatalf("got %+v, want %+v", doc.Targets, want)
	}

	var root yaml.Node
	if err := yaml.Unmarshal([]byte("addr: 127.0.0.3\nprot: 1\n"), &root); err != nil {
		t.Fatal(err)
	}
	l := lined{Addr: "before", line: 9}
	err := l.UnmarshalYAML(root.Content[0])
	if err == nil || err.Error() != `line 2: unknown key "prot" (known: addr, port)` {
		t.Fatalf("unknown key: got %v", err)
	}
	if l != (lined{Addr: "before", line: 9}) {
		t.Errorf("a refused block changed the value: %+v", l)
	}
}
