package yamlmsg

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// DecodeStrict decodes n into v (a pointer to a struct) refusing keys v has no
// yaml tag for, with the key's line: "line 7: unknown key "protocl" (known:
// …)". Node.Decode has no KnownFields switch, and the decoder's does not reach
// inside an UnmarshalYAML method, so the keys are checked against the tags here.
func DecodeStrict(n *yaml.Node, v any) error {
	if n.Kind == yaml.MappingNode {
		known := Keys(v)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; !slices.Contains(known, k.Value) {
				return fmt.Errorf("line %d: unknown key %q (known: %s)", k.Line, k.Value, strings.Join(known, ", "))
			}
		}
	}
	return n.Decode(v)
}

// DecodeLined is the UnmarshalYAML of a type that keeps its line: n decoded
// strictly (DecodeStrict) into a fresh value that replaces *dst, and n's line
// stored in *line, a field of *dst; on an error *dst is left as it was. dst
// is the caller's value as a type without methods (type plain T), so that
// decoding does not call its UnmarshalYAML again.
func DecodeLined[T any](n *yaml.Node, dst *T, line *int) error {
	var v T
	if err := DecodeStrict(n, &v); err != nil {
		return err
	}
	*dst = v
	*line = n.Line
	return nil
}

// Keys lists the yaml keys of the struct v points to, in field order.
func Keys(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}
