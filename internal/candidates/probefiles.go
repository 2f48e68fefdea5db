package candidates

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// pathList is a key that takes one path or a list of them
// (recorded.probes: a file, [day1.ndjson, day2.ndjson] or "rec/*.ndjson";
// recorded.forward and return alike).
type pathList []string

func (p *pathList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*p = pathList{n.Value}
		return nil
	case yaml.SequenceNode:
		var xs []string
		if err := n.Decode(&xs); err != nil {
			return err
		}
		*p = xs
		return nil
	}
	return fmt.Errorf("line %d: want a file, a glob pattern or a list of them", n.Line)
}

// recordedFiles resolves a recorded key that takes several files
// (recorded.probes, forward, return): each entry against the file's
// directory, a glob pattern to its files in name order; a pattern that
// matches nothing, a bad pattern or a file named twice is an error.
func (v *validator) recordedFiles(f *File, ps pathList, field, key string, line int) []string {
	var out []string
	for _, p := range ps {
		if strings.TrimSpace(p) == "" {
			v.errf(line, "%s.recorded.%s: an empty path", field, key)
			continue
		}
		path := f.resolve(p)
		if !strings.ContainsAny(p, "*?[") {
			if slices.Contains(out, path) {
				v.errf(line, "%s.recorded.%s: %s is named twice", field, key, p)
				continue
			}
			if _, err := os.Stat(path); err != nil {
				v.errf(line, "%s.recorded.%s: %v", field, key, err)
				continue
			}
			out = append(out, path)
			continue
		}
		ms, err := filepath.Glob(path)
		if err != nil {
			v.errf(line, "%s.recorded.%s: %q: not a glob pattern: %v", field, key, p, err)
			continue
		}
		if len(ms) == 0 {
			v.errf(line, "%s.recorded.%s: %q matches no file", field, key, p)
			continue
		}
		for _, m := range ms {
			if slices.Contains(out, m) {
				v.errf(line, "%s.recorded.%s: %s is named twice (by %q)", field, key, m, p)
				continue
			}
			out = append(out, m)
		}
	}
	return out
}
