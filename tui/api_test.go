package tui

import (
	"reflect"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/rdns"
)

// The options a caller outside the module would set name no internal type
// (issue 34: the public tui package exposed internal types in its API; hop
// names were an *rdns.Cache). Every field, through pointers, slices, maps
// and nested structs, is checked.
func TestOptionsNameNoInternalType(t *testing.T) {
	var bad []string
	seen := map[reflect.Type]bool{}
	var walk func(path string, ty reflect.Type)
	walk = func(path string, ty reflect.Type) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		if strings.Contains(ty.PkgPath(), "/internal/") {
			bad = append(bad, path+": "+ty.String())
			return
		}
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(path, ty.Elem())
		case reflect.Struct:
			for i := 0; i < ty.NumField(); i++ {
				if f := ty.Field(i); f.IsExported() {
					walk(path+"."+f.Name, f.Type)
				}
			}
		}
	}
	walk("RunOptions", reflect.TypeOf(RunOptions{}))
	if len(bad) > 0 {
		t.Errorf("internal types in the options: %v", bad)
	}
	// What cmd passes still fits: rdns's cache names the hops.
	var _ HopNames = (*rdns.Cache)(nil)
}
