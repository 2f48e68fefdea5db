// Package yamlmsg rewrites go.yaml.in/yaml/v3 decoding messages, which name Go
// types ("cannot unmarshal !!str `60ms` into float64"), into words a user of
// the YAML file can act on ("want a number, got "60ms""), and decodes
// strictly with line numbers (DecodeStrict, DecodeLined, OneDocument,
// ReadFile). It is public so that the public billing package reads its
// offers with the same rules as every other configuration file without
// importing an internal package (issue 34).
package yamlmsg

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// The expressions are compiled on the first message, not at package init:
// every linecheck command links this package and most never see a bad file.
var (
	unmarshalRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("(?m)cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
	})
	fieldRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)field (\S+) not found in type .*$`) })
)

// Humanize rewrites the Go-typed parts of one yaml.v3 message and leaves
// the rest (such as a "line N:" prefix) as it is.
func Humanize(msg string) string {
	msg = unmarshalRE().ReplaceAllStringFunc(msg, func(m string) string {
		g := unmarshalRE().FindStringSubmatch(m)
		return fmt.Sprintf("want %s, got %s", want(g[3]), got(g[1], g[2]))
	})
	return fieldRE().ReplaceAllString(msg, `unknown key "$1"`)
}

// want names what a Go type expects in YAML terms.
func want(goType string) string {
	t := strings.TrimLeft(goType, "*")
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), t == "interface {}":
		return "a mapping"
	case t == "string":
		return "text"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "time.Duration":
		return "a duration such as 500ms"
	case strings.HasSuffix(t, ".Dec"), strings.Contains(t, "decimal."):
		return `a decimal number such as "12.50"`
	default:
		return "a mapping"
	}
}

// got names a YAML node by its tag and value.
func got(tag, value string) string {
	switch tag {
	case "map":
		return "a mapping"
	case "seq":
		return "a list"
	case "null":
		return "nothing"
	case "str":
		return fmt.Sprintf("%q", value)
	}
	if value != "" {
		return value
	}
	return "!!" + tag
}

// FileError turns a yaml.v3 decoding error into "file:LINE: message" lines
// (one per problem, joined), in words (Humanize), for a file called name.
func FileError(name string, err error) error {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	var out []error
	for _, m := range msgs {
		m = strings.TrimPrefix(m, "yaml: ")
		if rest, ok := strings.CutPrefix(m, "line "); ok {
			if n, msg, ok := strings.Cut(rest, ": "); ok {
				out = append(out, fmt.Errorf("%s:%s: %s", name, n, Humanize(msg)))
				continue
			}
		}
		if m == "EOF" {
			m = "empty file"
		}
		out = append(out, fmt.Errorf("%s: %s", name, Humanize(m)))
	}
	return errors.Join(out...)
}
