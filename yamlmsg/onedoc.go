package yamlmsg

import (
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// OneDocument refuses what dec holds after the document the caller decoded
// from it: a configuration file is one YAML document, and a second one
// (after a "---" line) would otherwise be ignored without a word, its
// candidates, offers or limits never read. name prefixes the message;
// what says which file it is ("a candidates file").
// An empty document (a file that ends in "---") is no second document.
func OneDocument(dec *yaml.Decoder, name, what string) error {
	var n yaml.Node
	for {
		err := dec.Decode(&n)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return FileError(name, err)
		}
		if len(n.Content) > 0 && !empty(n.Content[0]) {
			break
		}
	}
	return fmt.Errorf("%s:%d: a second YAML document (after a --- line): %s is one document; move its keys into the first or remove the ---", name, n.Content[0].Line, what)
}

// empty tells a document with nothing in it (a null scalar without text).
func empty(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Value == ""
}
