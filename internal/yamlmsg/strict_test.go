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
